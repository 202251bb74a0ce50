"""The user-facing documents: short README with its figures from one source, no notes about the machine
the kit is built on, figures stated alike wherever they are copied, one namespace in every command,
the runner image in every install, the chart's dependency count, and default runner resources that
follow the kit's own sizing. Each check has a red case that feeds it a broken copy."""
import json
import math
import re
import subprocess
import sys

import pytest
import yaml

from conftest import CHART_SRC, ROOT

README = ROOT / "README.md"
CALIBRATE = ROOT / "scenarios" / "calibrate" / "README.md"
VALUES = CHART_SRC / "values.yaml"

# ---- README: short, two commands first, lines a reader can read ----

MAX_README_LINES = 150
MAX_LINE = 120


def prose_lines(text):
    """(number, line) outside fenced code and tables."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced and not line.startswith("|"):
            yield n, line


def long_lines(text):
    return [f"{n}: {len(l)} characters" for n, l in prose_lines(text) if len(l) > MAX_LINE]


def test_readme_short_with_the_two_commands_first():
    text = README.read_text()
    assert len(text.splitlines()) <= MAX_README_LINES, len(text.splitlines())
    first_section = text.split("\n## ", 2)[1]
    assert first_section.startswith("Start here"), first_section[:60]
    for command in ("make demo", "make test"):
        assert command in first_section, command
    for prerequisite in ("Debian 12", "root", "apt", "Go module proxy", "PyPI", "npm"):
        assert prerequisite in first_section, prerequisite
    assert "](dashboards/images/" in text.split("\n## ", 1)[0], "no picture of a run before the first section"


def test_readme_lines_short():
    assert long_lines(README.read_text()) == []
    assert long_lines("prose " + "x" * MAX_LINE + "\n```\n" + "y" * 200 + "\n```\n| " + "z" * 200) == ["1: 126 characters"]


def test_readme_links_exist():
    targets = re.findall(r"\]\(([^)#\s]+)\)", README.read_text())
    assert targets, "no links"
    assert [t for t in targets if not t.startswith("http") and not (ROOT / t).exists()] == []


# ---- the times: README's table is generated from ci/README.md "Test times" ----

def run_doc_figures(root, mode):
    return subprocess.run([sys.executable, root / "ci" / "tools" / "doc-figures.py", mode], capture_output=True, text=True)


def test_readme_times_generated_from_ci_readme():
    result = run_doc_figures(ROOT, "--check")
    assert result.returncode == 0, result.stdout + result.stderr
    source = (ROOT / "ci" / "README.md").read_text()
    cold, warm = re.search(r"^\| `make test` \| ([^|]+) \| ([^|]+) \|", source, re.M).groups()
    assert f"| `make test` | {cold.strip()} | {warm.strip()} |" in README.read_text()


@pytest.mark.parametrize("edit", ["readme", "source"])
def test_readme_times_check_fails_on_a_copy_that_differs(repo_copy, edit):
    tmp_path = repo_copy  # the whole tree: doc-figures.py also checks the versions (test_pins.py)
    changed = tmp_path / ("README.md" if edit == "readme" else "ci/README.md")
    text = changed.read_text()
    cold = re.search(r"^\| `make test` \| ([^|]+) \|", text, re.M).group(1).strip()
    changed.write_text(text.replace(f"| `make test` | {cold} |", "| `make test` | 1 min 1 s |"))
    result = run_doc_figures(tmp_path, "--check")
    assert result.returncode == 1 and "doc-figures.py --write" in result.stdout, result.stdout + result.stderr
    assert run_doc_figures(tmp_path, "--write").returncode == 0
    assert run_doc_figures(tmp_path, "--check").returncode == 0


def test_figures_are_their_tables_counts():
    """The counts the READMEs mark (<!-- figure: NAME -->) are what doc-figures.py counts in their tables."""
    marked = re.findall(r"<!-- figure: ([\w-]+) -->([^<]*)<!--", (ROOT / "ci" / "README.md").read_text())
    rows = len(re.findall(r"^- id: ", (CHART_SRC / "tests" / "bad-values.yaml").read_text(), re.M))
    assert ("bad-values", str(rows)) in marked and rows > 100, marked


def test_figures_check_fails_on_a_table_that_grew(repo_copy):
    """A row added to the bad-values table turns --check red naming the README, until --write counts it."""
    table = repo_copy / "charts" / "bench" / "tests" / "bad-values.yaml"
    rows = len(re.findall(r"^- id: ", table.read_text(), re.M))
    table.write_text(table.read_text() + "- id: 999-planted\n  values: |\n    x: 1\n  expect: 'x'\n")
    result = run_doc_figures(repo_copy, "--check")
    assert result.returncode == 1 and "ci/README.md: a figure differs" in result.stdout, result.stdout + result.stderr
    assert run_doc_figures(repo_copy, "--write").returncode == 0
    assert f"<!-- figure: bad-values -->{rows + 1}<!-- /figure -->" in (repo_copy / "ci" / "README.md").read_text()
    assert run_doc_figures(repo_copy, "--check").returncode == 0


# ---- no notes about the machine the kit is built on, in what users read ----

USER_DOCS = [README, CHART_SRC / "README.md", ROOT / "scenarios" / "README.md", ROOT / "scenarios" / "interfaces.md",
             ROOT / "scenarios" / "calibrate" / "README.md", ROOT / "dashboards" / "README.md",
             ROOT / "dashboards" / "report" / "README.md"]
COMMENTED = [VALUES, *sorted((ROOT / "values").glob("*.yaml")), ROOT / "scenarios" / "runner" / "versions.env",
             ROOT / "scenarios" / "calibrate" / "versions.env"]
NOTES = CHART_SRC / "templates" / "NOTES.txt"
BUILD_MACHINE = [
    r"\b(?:served|builds?|built|runs?|ran|measured|tested|pulled|downloaded|obtained|reachable|fetched) here\b",
    r"\bnot served\b", r"\bproxy refuses\b", r"\brefused by the (?:Go )?proxy\b", r"\bmirrors?\b",
    r"\bthis (?:machine|VM)\b", r"\bsessions?\b", r"\bstop \d+\b", r"\bother clones\b", r"\bagents?'? clones\b",
    r"`fetch`|\bfetch tool\b|\bread_file\b|\bfind_files\b", r"\bCI run\b", r"\bon the shared 2 cores\b",
]


def comments(path):
    """The comment text of a YAML file (what a user reads in values files)."""
    return "\n".join(m.group(1) for m in re.finditer(r"#(.*)$", path.read_text(), re.M))


def build_machine_phrases(text):
    return sorted({m.group(0) for p in BUILD_MACHINE for m in re.finditer(p, text, re.I)})


@pytest.mark.parametrize("path", USER_DOCS + COMMENTED + [NOTES], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_build_machine_notes_in_user_docs(path):
    text = comments(path) if path.suffix == ".yaml" else path.read_text()
    assert build_machine_phrases(text) == []


@pytest.mark.parametrize("planted", ["v1.6.0 is not served", "the newest that builds here", "the stored kgateway mirror",
                                     "measured in stop 20", "on this machine", "the proxy refuses v3.7"])
def test_build_machine_check_fails_on_a_planted_phrase(planted):
    assert build_machine_phrases(README.read_text() + "\n" + planted) != []


# ---- figures copied from scenarios/calibrate/README.md (the measured source) ----

def calibrate_figures():
    text = CALIBRATE.read_text()
    keep_alive = re.search(r"Sized rate: ([\d,]+) req/s per runner core", text).group(1)
    close, tls = re.search(r"ceiling method's rates \(half the busy-machine ceiling: ([\d,]+) and ([\d,]+) req/s per core\)",
                           text).groups()
    default_gc = re.search(r"\(`GOGC=100`\) had p99 ([\d.]+) ms", text).group(1)
    shipped_gc = re.search(r"With the shipped settings: ([\d.]+-[\d.]+) ms", text).group(1)
    return {"keep_alive": keep_alive, "close": close, "tls": tls, "default_gc": default_gc, "shipped_gc": shipped_gc}


PER_CORE = re.compile(r"runner core holds ([\d,]+) req/s with keep-alive, ([\d,]+) with `?Connection: close`?,\s+([\d,]+) TLS"
                      r"\s+handshakes")
GC = re.compile(r"p99 ([\d.]+) ms with Go's default(?: collector)? and ([\d.]+-[\d.]+) ms with")
RATE_COPIES = {README: "text", VALUES: "comments"}
GC_COPIES = {CHART_SRC / "README.md": "text", VALUES: "comments"}
# Any "N req/s per core" a user reads must be one of the calibrated rates.
ANY_PER_CORE = re.compile(r"([\d.,]+k?) req/s per (?:runner )?core")


def read(path, how):
    return comments(path) if how == "comments" else path.read_text()


def figure_problems(texts, figures):
    bad = []
    for name, (text, kinds) in texts.items():
        flat = re.sub(r"\s*\n\s*#?\s*", " ", text)
        if "rate" in kinds:
            found = PER_CORE.findall(flat)
            if not found:
                bad.append(f"{name}: no 'runner core holds N req/s with keep-alive, N with Connection: close, N TLS handshakes'")
            bad += [f"{name}: per-core rates {f}" for f in found if f != (figures["keep_alive"], figures["close"], figures["tls"])]
        if "gc" in kinds:
            found = GC.findall(flat)
            if not found:
                bad.append(f"{name}: no 'p99 N ms with Go's default collector and N-N ms with'")
            bad += [f"{name}: collector figures {f}" for f in found if f != (figures["default_gc"], figures["shipped_gc"])]
        allowed = {figures["keep_alive"], figures["close"], figures["tls"]}
        bad += [f"{name}: '{r} req/s per core' is no calibrated rate" for r in ANY_PER_CORE.findall(flat) if r not in allowed]
    return bad


def copies():
    texts = {}
    for path, how in RATE_COPIES.items():
        texts[path.name if path != VALUES else "values.yaml"] = [read(path, how), {"rate"}]
    for path, how in GC_COPIES.items():
        key = "values.yaml" if path == VALUES else str(path.relative_to(ROOT))
        texts.setdefault(key, [read(path, how), set()])[1].add("gc")
    for path in USER_DOCS:
        if path != CALIBRATE:  # the source; its derived rates (30,000 / 16 cores) are not copies
            texts.setdefault(str(path.relative_to(ROOT)), [path.read_text(), set()])
    return {k: (v[0], v[1]) for k, v in texts.items()}


def test_calibrated_figures_stated_alike():
    assert figure_problems(copies(), calibrate_figures()) == []


@pytest.mark.parametrize("old, new", [("83.8", "43.8"), ("3.6-18.3", "0.92-0.92")])
def test_calibrated_figures_check_fails_on_a_stale_copy(old, new):
    texts = copies()
    texts["values.yaml"] = (texts["values.yaml"][0].replace(old, new), texts["values.yaml"][1])
    assert figure_problems(texts, calibrate_figures()) != []


def test_per_core_check_fails_on_a_stale_rate():
    texts = {"README.md": (README.read_text() + "\nk6 holds about 3k req/s per core", set())}
    assert figure_problems(texts, calibrate_figures()) == ["README.md: '3k req/s per core' is no calibrated rate"]


# ---- the default runner holds the default rate by the kit's own sizing ----

def scenario_setting(loadtest, key):
    """loadtest.<key> as the runners get it: empty = the scenario's default, scenarios/contract.json's
    (what the chart's own sizing uses too, bench.loadtest.effective)."""
    if loadtest.get(key) not in (None, ""):
        return loadtest[key]
    contract = json.loads((CHART_SRC / "scenarios" / "contract.json").read_text())
    text = next(v["default"] for v in contract["variables"]["list"] if v["valuesKey"] == f"loadtest.{key}")
    return int(text) if text.isdigit() else text


def runner_problems(values, figures, base_mb, per_vu_mb):
    loadtest = dict(values["loadtest"])
    for key in ("rate", "timeout", "connections"):
        loadtest[key] = scenario_setting(loadtest, key)
    res = loadtest["runner"]["resources"]
    per_core = int(figures["keep_alive"].replace(",", ""))
    cores = math.ceil(loadtest["rate"] / per_core)
    bad = []

    def cpu(v):
        v = str(v)
        return int(v[:-1]) / 1000 if v.endswith("m") else float(v)

    def mib(v):
        v = str(v)
        return int(v[:-2]) * 1024 if v.endswith("Gi") else int(v[:-2])

    if "cpu" not in res.get("limits", {}) or cpu(res["limits"]["cpu"]) < cores:
        bad.append(f"limits.cpu {res.get('limits', {}).get('cpu')} holds less than {loadtest['rate']} req/s at {per_core} per core")
    if cpu(res["requests"]["cpu"]) != cpu(res["limits"].get("cpu", 0)) or mib(res["requests"]["memory"]) != mib(res["limits"]["memory"]):
        bad.append(f"requests {res['requests']} differ from limits {res['limits']} (the sizing uses requests = limits)")
    timeout = int(str(loadtest["timeout"]).removesuffix("s"))
    vus = loadtest["maxConnections"] or max(loadtest["rate"] * timeout, loadtest["connections"])
    heap = base_mb + per_vu_mb * vus
    if mib(res["limits"]["memory"]) < 2 * heap:
        bad.append(f"limits.memory {res['limits']['memory']} under twice the live heap at {vus} VUs ({heap:.0f} MB)")
    return bad


def memory_sizing():
    base, per_vu = re.search(r"(\d+) MB \+ (\d+\.\d+) MB per VU", CALIBRATE.read_text()).groups()
    return float(base), float(per_vu)


def test_default_runner_follows_the_sizing():
    values = yaml.safe_load(VALUES.read_text())
    assert runner_problems(values, calibrate_figures(), *memory_sizing()) == []
    text = comments(VALUES)
    assert "holds the default rate" in re.sub(r"\s*\n\s*", " ", text), "values.yaml does not say the runner is sized for the default rate"


@pytest.mark.parametrize("resources", [
    {"requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},     # the old default
    {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "256Mi"}},
])
def test_runner_check_fails_on_an_undersized_default(resources):
    values = yaml.safe_load(VALUES.read_text())
    values["loadtest"]["runner"]["resources"] = resources
    assert runner_problems(values, calibrate_figures(), *memory_sizing()) != []


# ---- commands: one namespace, the runner image in every install, the dependency count ----

COMMAND_DOCS = [README, CHART_SRC / "README.md"]


def commands(text):
    """Shell commands in fenced blocks (continuations joined) and in inline code."""
    out = []
    for block in re.findall(r"```\n(.*?)```", text, re.S):
        out += [c.strip() for c in re.sub(r"\\\n\s*", " ", block).splitlines() if c.strip() and not c.startswith("#")]
    inline = [re.sub(r"\s+", " ", c) for c in re.findall(r"`((?:helm|kubectl) [^`]+)`", text)]
    out += [c for c in inline if len(c.split()) >= 4]  # `helm uninstall` alone names the command, runs nothing
    return out


def command_problems(text):
    bad = []
    for c in commands(text):
        c = c.split(" #")[0]
        if re.match(r"(helm (install|upgrade|uninstall|test|status)|kubectl)\b", c) and "<" not in c:
            # cluster-wide commands name no namespace: CRDs, every namespace (-A), the namespace itself
            if not re.search(r"(-n|--namespace) bench\b", c) and not re.search(r"--all-namespaces| -A\b", c) and not re.match(
                    r"kubectl (apply|delete) .*(crd|-f https://)|kubectl (get|delete) (crd|validatingadmissionpolic|clusterrole)"
                    r"|kubectl delete namespace bench\b"
                    r"|helm template", c):
                bad.append(f"no '-n bench': {c}")
        if re.match(r"helm (install|upgrade --install) ", c) and not re.search(r"runner\.yaml|loadtest\.runner\.image|\$IMG|loadtest\.enabled=false|\.\.\.", c):
            bad.append(f"no runner image: {c}")
    return bad


@pytest.mark.parametrize("path", COMMAND_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_commands_use_the_bench_namespace_and_a_runner_image(path):
    assert command_problems(path.read_text()) == []


def test_command_check_fails_on_another_namespace_or_no_image():
    text = "```\nhelm install bench ./charts/bench -f values/traefik.yaml\nkubectl get testrun bench-loadtest -w\n```\n"
    assert command_problems(text) == ["no '-n bench': helm install bench ./charts/bench -f values/traefik.yaml",
                                      "no runner image: helm install bench ./charts/bench -f values/traefik.yaml",
                                      "no '-n bench': kubectl get testrun bench-loadtest -w"]


def test_readme_says_why_a_dedicated_namespace_and_what_uninstall_leaves():
    flat = re.sub(r"\s*\n\s*", " ", README.read_text())
    assert re.search(r"dedicated namespace, `bench`.*Role", flat), "README does not say why one dedicated namespace"
    uninstall = re.search(r"`helm uninstall bench -n bench` removes (.*?)\(charts/bench/README.md", flat)
    assert uninstall, "README does not say what uninstall removes"
    for stays in ("CRDs", "sysctl"):
        assert stays in uninstall.group(1), stays


NUMBER_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}


def dependency_count_problems(text, chart_yaml):
    deps = len(yaml.safe_load(chart_yaml)["dependencies"])
    stated = re.findall(r"downloads (?:all )?(\w+) dependency charts", text)
    if not stated:
        return ["no 'downloads N dependency charts'"]
    return [f"says {s}, Chart.yaml has {deps}" for s in stated if NUMBER_WORDS.get(s, s) not in (deps, str(deps))]


def test_chart_readme_dependency_count_matches_chart_yaml():
    assert dependency_count_problems((CHART_SRC / "README.md").read_text(), (CHART_SRC / "Chart.yaml").read_text()) == []


def test_dependency_count_check_fails_on_the_old_count():
    assert dependency_count_problems("`--dependency-update` downloads all six dependency charts",
                                     (CHART_SRC / "Chart.yaml").read_text()) == ["says six, Chart.yaml has 10"]


# ---- more figures with one source: the overhead ratios, the published test's runners, versions ----

def overhead_problems(copy_text, source_text):
    static, dynamic = re.search(r"reached \(static ([\d.]+-[\d.]+) in \d+ pairs; dynamic ([\d.]+-[\d.]+)", source_text).groups()
    found = re.findall(r"bench static does ([\d.]+-[\d.]+)\s+of bare k6's requests per CPU-second, dynamic ([\d.]+-[\d.]+)", copy_text)
    if not found:
        return ["no 'bench static does A-B of bare k6's requests per CPU-second, dynamic C-D'"]
    return [f"overhead {f}, calibrate says {(static, dynamic)}" for f in found if f != (static, dynamic)]


def test_overhead_ratios_stated_alike():
    source = CALIBRATE.read_text()
    copy = (ROOT / "scenarios" / "README.md").read_text()
    assert overhead_problems(copy, source) == []
    assert overhead_problems(copy.replace("0.91-0.995", "0.79-0.82"), source) != []


def published_problems(readme_text, preset):
    runner = preset["loadtest"]
    pods, cpu = runner["parallelism"], int(runner["runner"]["resources"]["limits"]["cpu"])
    flat = re.sub(r"\s*\n\s*", " ", readme_text)
    bad = []
    if f"{pods} runners of {cpu} cores" not in flat:
        bad.append(f"README does not say '{pods} runners of {cpu} cores'")
    if f"{pods * cpu} runner cores" not in flat:
        bad.append(f"README does not say '{pods * cpu} runner cores'")
    return bad


def test_published_test_runners_match_the_preset():
    preset = yaml.safe_load((ROOT / "values" / "published-30k.yaml").read_text())
    assert published_problems(README.read_text(), preset) == []
    preset["loadtest"]["parallelism"] = 10
    assert len(published_problems(README.read_text(), preset)) == 2


def version_problems(readme_text, chart_yaml, presets_dir):
    chart = yaml.safe_load(chart_yaml)
    gateway_api = chart["annotations"]["bench.dev/gateway-api-version"]
    bad = [f"Gateway API {v}, Chart.yaml pins {gateway_api}" for v in re.findall(r"Gateway API (v\d+\.\d+\.\d+)", readme_text)
           if v != gateway_api]
    pinned = {str(d["version"]) for d in chart["dependencies"]}
    for row in re.findall(r"^\| `([a-z0-9-]+\.yaml)` \|(.*)$", readme_text, re.M):
        preset = (presets_dir / row[0]).read_text() if (presets_dir / row[0]).exists() else ""
        for version in re.findall(r"\bv?\d+\.\d+\.\d+\b", row[1]):
            if version not in pinned and version.lstrip("v") not in pinned and version not in preset and version != gateway_api:
                bad.append(f"{row[0]}: {version} is neither a Chart.yaml pin nor in the preset")
    return bad


def test_readme_versions_match_chart_yaml_and_presets():
    chart = (CHART_SRC / "Chart.yaml").read_text()
    assert version_problems(README.read_text(), chart, ROOT / "values") == []
    assert version_problems(README.read_text().replace("chart 37.3.0", "chart 37.9.9"), chart, ROOT / "values") != []
    assert version_problems(README.read_text() + "\nGateway API v9.9.9", chart, ROOT / "values") != []

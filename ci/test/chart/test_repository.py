"""Chart.lock, the dependency names the templates know, the e2e's Traefik against its preset, yamllint,
and no text naming a file of this repository that is not there."""
import json
import os
import re
import subprocess
import sys

import yaml

from conftest import CHART_SRC, ROOT, load_docs, output_of, run
from e2eharness import stack

YAMLLINT_CONFIG = ("{extends: default, rules: {line-length: {max: 160}, document-start: disable, truthy: {check-keys: false}, "
                   "comments: {min-spaces-from-content: 1}, braces: {max-spaces-inside: 1}, "
                   "brackets: {max-spaces-inside: 1}, indentation: {indent-sequences: consistent}}}")


def test_chart_lock_digest_and_versions():
    result = run([sys.executable, ROOT / "ci" / "tools" / "chart-lock.py", CHART_SRC, "--check"])
    assert result.returncode == 0, output_of(result)


def test_helm_dependency_build_accepts_the_chart_lock(helm, work):
    """`dependency build` checks the lock digest first and only then needs the (unreachable)
    repositories: reaching the repository error proves the lock is in sync."""
    lock = work / f"lock-v{helm.major}"
    lock.mkdir()
    for name in ("Chart.yaml", "Chart.lock"):
        (lock / name).write_bytes((CHART_SRC / name).read_bytes())
    env = {**os.environ, "HELM_REPOSITORY_CONFIG": str(lock / "repositories.yaml"), "HELM_CACHE_HOME": str(lock / "cache")}
    out = output_of(helm("dependency", "build", lock, env=env))
    assert "out of sync" not in out, out
    assert "no repository definition" in out, out


def test_no_dependency_chart_sources_committed():
    tracked = subprocess.run(["git", "-C", ROOT, "ls-files", "charts/bench/charts", "*.tgz"],
                             capture_output=True, text=True, check=True).stdout
    assert tracked == "", f"committed: {tracked}"


def test_controller_charts_helper_matches_chart_yaml_aliases():
    """bench.controllerCharts (the aliased controllers' real chart names, which helm replaces by the
    alias when it loads the chart) must match Chart.yaml's dependencies."""
    deps = {d.get("alias", d["name"]): d["name"] for d in yaml.safe_load((CHART_SRC / "Chart.yaml").read_text())["dependencies"]}
    helpers = (CHART_SRC / "templates" / "_helpers.tpl").read_text()
    block = re.search(r'define "bench.controllerCharts" -}}\n(.*?)\n{{- end }}', helpers, re.S)
    assert block, "no bench.controllerCharts in _helpers.tpl"
    mapping = yaml.safe_load(block.group(1))
    assert mapping, "bench.controllerCharts is empty"
    assert {c: deps.get(c) for c in mapping} == mapping


def test_the_e2e_traefik_runs_the_traefik_preset(work):
    """The e2e's Traefik (ci/e2e/manifests/traefik.yaml, a stand-in for the traefik subchart, which
    cannot be downloaded here) runs the preset's configuration: its release (the image tag), every
    argument the preset adds, its global settings and its metrics port. The manifests are filled the
    way the e2e harness applies them (e2eharness.stack.fill_traefik) and compared with the preset."""
    preset_path = ROOT / "values" / "traefik.yaml"

    def fill(manifest):
        return stack.fill_traefik((ROOT / "ci" / "e2e" / "manifests" / manifest).read_text(),
                                  yaml.safe_load(preset_path.read_text())["traefik"])

    preset = yaml.safe_load(preset_path.read_text())["traefik"]
    docs = load_docs(fill("traefik.yaml"))
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    args = container["args"]
    assert preset.get("additionalArguments"), "the preset adds no arguments"
    assert [a for a in preset["additionalArguments"] if a not in args] == [], "preset arguments missing from the e2e Traefik"
    for key, value in preset.get("global", {}).items():
        assert f"--global.{key}={str(value).lower()}" in args
    port = preset["ports"]["metrics"]["port"]
    assert f"--entryPoints.metrics.address=:{port}" in args, args
    assert {"name": "metrics", "containerPort": port} in container["ports"], container["ports"]
    metrics_service = next(d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "traefik-metrics")
    assert metrics_service["spec"]["ports"][0]["port"] == port
    prometheus = fill("prometheus.yaml")
    assert f":{port}'" in prometheus or f":{port}]" in prometheus, "Prometheus scrapes another port"
    assert not [a for a in args if "BENCH_TRAEFIK" in str(a)], "unfilled placeholder"
    # the image ci/images/defs/traefik.sh tags with the preset's release (values/traefik.yaml, the pin)
    assert container["image"] == f"bench/traefik:{preset['image']['tag']}", container["image"]
    # the one difference, on purpose: the preset runs on the host network, which on this machine
    # would bind Traefik on the host's external interface (test traffic stays on loopback and pod networks)
    assert preset.get("hostNetwork") is True and not deployment["spec"]["template"]["spec"].get("hostNetwork")


def test_yamllint():
    """values, presets, CI overlays, unittest suites."""
    files = [CHART_SRC / "values.yaml", CHART_SRC / "Chart.yaml", *sorted((CHART_SRC / "ci").glob("*.yaml")),
             *sorted((CHART_SRC / "tests").glob("*.yaml")), *sorted((ROOT / "values").glob("*.yaml"))]
    result = run(["yamllint", "-s", "-d", YAMLLINT_CONFIG, *files])
    assert result.returncode == 0, output_of(result)


# ---- every repository path a tracked text names exists ----

# A path as docs and comments write it: a top-level folder, then a file with a known extension.
REPO_PATH = re.compile(r"(?<![A-Za-z0-9_./-])((?:ci|scenarios|dashboards|charts|values)/[A-Za-z0-9_./-]*[A-Za-z0-9_-]"
                       r"\.(?:sh|py|js|json|yaml|md|go|txt))(?![A-Za-z0-9_/-])")
# Named on purpose though absent: each with why.
ABSENT_ON_PURPOSE = {
    "scenarios/nosuch.js": "the bad-values case of a scenario with no file",
    "ci/images/defs/NAME.sh": "the placeholder in the image builder's usage",
    "charts/bench/tests/new_test.yaml": "the new file test_pins.py plants a stray version copy in",
    "scenarios/lib/x.js": "the example of _helpers.tpl's file-name mapping",
    "charts/gateway-addons-helm/dashboards/envoy-clusters.json": "a file of envoyproxy/gateway the metric list cites",
}


def named_paths():
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, text=True, check=True).stdout
    for name in filter(None, files.split("\0")):
        path = ROOT / name
        if path.suffix not in {".md", ".sh", ".py", ".js", ".go", ".yaml", ".json", ".txt", ".tpl"} and path.name != "Makefile":
            continue
        text = path.read_text(errors="replace")
        for match in REPO_PATH.finditer(text):
            yield name, match.group(1)


def test_no_dangling_repository_paths():
    """A path is found from the repository root, from the naming file's folder, or (chart files and
    its README) from charts/bench."""
    missing = []
    for name, ref in named_paths():
        if ref in ABSENT_ON_PURPOSE:
            continue
        bases = [ROOT, (ROOT / name).parent, CHART_SRC]
        if not any((base / ref).exists() for base in bases):
            missing.append(f"{name}: {ref}")
    assert not missing, "files named but not in the repository:\n" + "\n".join(sorted(set(missing)))


# Product code: what users run. It may use lib/ (the shared shell helpers) but never the harness.
PRODUCT_DIRS = ["charts", "scenarios", "dashboards", "values", "lib"]
PRODUCT_CODE = (".sh", ".py", ".js", "Dockerfile")
# A line that runs something under ci/: sourced, executed or exec'd by the shell, or a Python path
# built from "ci" (descriptions and docstrings that name a harness file are not uses).
USES_CI = re.compile(r"""(?:^|[;&|(]\s*|\s)(?:\.|source|bash|sh|exec|python3?)\s+["']?[^"'\s]*\bci/"""
                     r"""|/\s*["']ci["']|["'][^"'\s]*\bci/(?:lib|e2e|test|tools|cluster|images|demo)/""")


def product_files():
    for top in PRODUCT_DIRS:
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and path.name.endswith(PRODUCT_CODE):
                yield path


def code_lines(path):
    """The lines that run: comments (#, //) and chart-template comments left out."""
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        stripped = line.strip()
        if not stripped.startswith(("#", "//", "{{/*", "*")):
            yield n, line


def test_product_code_never_uses_the_harness():
    """No script, module or template under charts/, scenarios/, dashboards/, values/ or lib/ sources,
    runs or imports a script of ci/ (ci/ holds the harness only and is not shipped); the shell helpers they share
    are lib/. The Makefile and ci/ may call product code, not the reverse."""
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in product_files()
             for n, line in code_lines(path) if USES_CI.search(line)]
    assert not found, "product code using ci/:\n" + "\n".join(found)


def test_harness_check_catches_a_product_script_sourcing_ci():
    """The check above can fail: a product-style line sourcing ci/lib/common.sh matches."""
    assert USES_CI.search('. "$(dirname "$0")/../../ci/lib/common.sh"')
    assert USES_CI.search('  . "$BENCH_ROOT/ci/e2e/lib.sh"')
    assert USES_CI.search('  bash "$BENCH_ROOT/ci/tools/install.sh" >&2')
    assert USES_CI.search('HARNESS = ROOT / "ci" / "test"')
    assert not USES_CI.search('. "$(dirname "$0")/../../lib/common.sh"')


# The runner memory sizing, measured in scenarios/calibrate (README "Memory per VU", the source),
# is restated where users size runners: each copy must say the same and compute from it.
SIZING_SOURCE = ROOT / "scenarios" / "calibrate" / "README.md"
SIZING_COPIES = [CHART_SRC / "values.yaml", CHART_SRC / "README.md", ROOT / "values" / "published-30k.yaml"]
SIZING = re.compile(r"(\d+) MB \+ (\d+\.\d+) MB per VU")


def about_mb(mb):
    return int(mb / 10 + 0.5) * 10


def test_runner_memory_sizing_stated_alike():
    source = SIZING.findall(SIZING_SOURCE.read_text())
    assert source, f"{SIZING_SOURCE} states no 'N MB + X MB per VU'"
    base, per_vu = float(source[0][0]), float(source[0][1])
    for path in [SIZING_SOURCE, *SIZING_COPIES]:
        stated = SIZING.findall(path.read_text())
        assert stated, f"{path} states no 'N MB + X MB per VU'"
        assert {(float(b), float(v)) for b, v in stated} == {(base, per_vu)}, (path, stated, (base, per_vu))
    # the copy the chart reads (templates/validate.yaml refuses a runner memory limit below it)
    memory = json.loads((ROOT / "scenarios" / "contract.json").read_text())["runnerMemory"]
    assert (float(memory["baseMB"]), float(memory["perVuMB"])) == (base, per_vu), ("scenarios/contract.json runnerMemory", memory)


def test_published_30k_runner_heap_stated_and_under_its_memory_limit():
    preset = yaml.safe_load((ROOT / "values" / "published-30k.yaml").read_text())["loadtest"]
    vus = preset["maxConnections"] // preset["parallelism"]
    base, per_vu = (float(x) for x in SIZING.findall(SIZING_SOURCE.read_text())[0])
    heap = about_mb(base + per_vu * vus)
    for path in [ROOT / "values" / "published-30k.yaml", SIZING_SOURCE]:
        assert f"about {heap} MB" in path.read_text(), (path, heap, vus)
    limit_mb = int(preset["runner"]["resources"]["limits"]["memory"].removesuffix("Gi")) * 1024
    assert heap < 0.85 * limit_mb / 2, (heap, limit_mb)  # GOMEMLIMIT 85%; half of it the collector's headroom


def test_chart_readme_default_ceiling_heap():
    text = (CHART_SRC / "README.md").read_text()
    base, per_vu = (float(x) for x in SIZING.findall(SIZING_SOURCE.read_text())[0])
    match = re.search(r"MB per VU of live heap \(scenarios/calibrate\) =\s+(\d+) MB at (\d+)", text)
    assert match, "charts/bench/README.md: no '... MB per VU of live heap (scenarios/calibrate) = N MB at VUS'"
    assert int(match.group(1)) == about_mb(base + per_vu * int(match.group(2))), match.group(0)

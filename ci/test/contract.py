#!/usr/bin/env python3
"""Parity checks between scenarios/contract.json and every copy of what it states.

The contract is the one statement of the error classes and causes, the percentiles, the metric
names and types, the runner's Role rules and the bench.summary/v1 JSON Schema. Readers that can
load it do (the chart, dashboards/generator/generate.py, the report package); the copies that must stay
literal (the k6 modules: every VU runs them) or are prose (the READMEs) are compared here, and
each check fails on any difference, naming it.

Usage (ci/test/report/test_contract.py runs each as one case; exit 0 = equal, 1 = a difference, printed):
  contract.py self                      the contract is consistent with itself
  contract.py k6-errors DUMP            scenarios/lib/errors.js ERROR_CAUSES / ERROR_CLASSES
  contract.py k6-percentiles DUMP       scenarios/lib/summary-writer.js percentiles (keys, k6 stats)
  contract.py k6-metrics DUMP           scenarios/lib/metrics.js + route-metrics.js names and types
  contract.py k6-variables DUMP         scenarios/lib/config.js DEFAULTS (every BENCH_* and its default)
  contract.py k6-variable-types DUMP    config.js loadConfig accepts and refuses each type's examples
  contract.py k6-warmup DUMP            scenarios/lib/load.js WARMUP (the warm-up's scenario name and role)
  contract.py k6-verdicts DUMP          scenarios/lib/verdicts.js RATE_HELD_SHARE and lag.js's limits (verdicts)
  contract.py k6-runner-memory DUMP     scenarios/lib/memory-plan.js RUNNER_MEMORY (runnerMemory)
  contract.py chart-variables           the TestRun's BENCH_* (_pod.tpl) and their values.yaml keys
  contract.py chart-variable-types HELM CHART
                                        helm template of CHART (an offline copy) accepts and refuses
                                        the same examples through the values keys
  contract.py readme-variables          scenarios/interfaces.md's Scenario configuration table
  contract.py dashboards-fixture        ci/tools/dashboards/fixtures/metrics.json, its k6 metrics
  contract.py readme-metrics README     the Metrics table of scenarios/interfaces.md or scenarios/README.md
  contract.py readme-errors             scenarios/interfaces.md's bench_errors row, scenarios/README.md's class table
  contract.py readme-summary            scenarios/interfaces.md's summary example validates against the schema
  contract.py valid SUMMARY...          each file validates against the schema
  contract.py mutations                 the names of the crafted bad summaries, one a line
  contract.py rejects SUMMARY NAME      SUMMARY with mutation NAME applied must NOT validate
DUMP is the output of `k6 run --quiet scenarios/tests/contract-dump.js` (what the k6 modules hold).
"""
import copy
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONTRACT = json.loads((ROOT / "scenarios/contract.json").read_text())
CAUSES = CONTRACT["errorClasses"]["causes"]
CLASSES = list(CAUSES)
PERCENTILES = CONTRACT["percentiles"]["list"]
METRICS = CONTRACT["metrics"]["list"]
BUILTIN = "k6 built-in"
OWN_METRICS = [m for m in METRICS if m["module"] != BUILTIN]
SCHEMA = CONTRACT["summarySchema"]
VARIABLES = CONTRACT["variables"]["list"]
# The readable form of the contract (the tables the READMEs link to).
INTERFACES = "scenarios/interfaces.md"
# How the READMEs name a k6 type.
README_TYPES = {("counter", "default"): "Counter", ("gauge", "default"): "Gauge", ("trend", "time"): "Trend"}


def differ(what, got, want):
    """Returns a message when got != want, else None."""
    if got == want:
        return None
    return f"{what}:\n  copy:     {got}\n  contract: {want}"


def validator():
    import jsonschema  # the project's venv has it (requirements.txt)
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


def schema_errors(doc):
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
            for e in sorted(validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]


# ---- the checks -----------------------------------------------------------------------------

def check_self():
    """The schema is valid JSON Schema and names exactly the contract's classes, causes and
    percentiles; percentile fields agree; each metric's Prometheus name and type follow from its
    k6 name and type (k6_ prefix, _total on counters, _seconds on time trends)."""
    bad = []
    validator()
    props, defs = SCHEMA["properties"], SCHEMA["$defs"]
    bad.append(differ("schema $defs.errors properties", list(defs["errors"]["properties"]), CLASSES))
    bad.append(differ("schema $defs.errors required", defs["errors"]["required"], CLASSES))
    causes = props["error_causes"]["properties"]
    bad.append(differ("schema error_causes classes", list(causes), CLASSES))
    complete = SCHEMA["else"]["properties"]["error_causes"]  # a runner's own summary has every pair
    bad.append(differ("schema (runner summary) error_causes required", complete["required"], CLASSES))
    for cls in CLASSES:
        bad.append(differ(f"schema error_causes.{cls}", list(causes.get(cls, {}).get("properties", {})), CAUSES[cls]))
        bad.append(differ(f"schema (runner summary) error_causes.{cls} required",
                          complete["properties"].get(cls, {}).get("required"), CAUSES[cls]))
    keys = ["min", "avg", "max"] + [p["key"] for p in PERCENTILES]
    bad.append(differ("schema $defs.latency properties", list(defs["latency"]["properties"]), keys))
    bad.append(differ("schema $defs.latency required", defs["latency"]["required"], keys))
    bad.append(differ("schema schema const", props["schema"]["const"], SCHEMA["$id"]))
    for p in PERCENTILES:
        number = p["key"][1:]
        bad.append(differ(f"percentile {p['key']} k6 stat", p["k6"], f"p({number})"))
        bad.append(differ(f"percentile {p['key']} quantile", float(p["quantile"]), round(float(number) / 100, 8)))
    prom_types = {"counter": "counter", "gauge": "gauge", "trend": "native_histogram"}
    for m in METRICS:
        want = "k6_" + m["name"] + ("_total" if m["k6Type"] == "counter" else "") + (
            "_seconds" if m["contains"] == "time" else "")
        bad.append(differ(f"metric {m['name']} Prometheus name", m["prometheus"], want))
        bad.append(differ(f"metric {m['name']} Prometheus type", m["prometheusType"], prom_types[m["k6Type"]]))
    return [b for b in bad if b]


def load_dump(path):
    return json.loads(pathlib.Path(path).read_text())


def check_k6_errors(dump):
    d = load_dump(dump)
    return [b for b in (
        differ("scenarios/lib/errors.js ERROR_CLASSES", d["errorClasses"], CLASSES),
        differ("scenarios/lib/errors.js ERROR_CAUSES (order too: the first cause is the catch-all)",
               [[c, v] for c, v in d["errorCauses"].items()], [[c, v] for c, v in CAUSES.items()]),
    ) if b]


def check_k6_percentiles(dump):
    d = load_dump(dump)
    keys = ["min", "avg", "max"] + [p["key"] for p in PERCENTILES]
    bad = [differ("scenarios/lib/summary-writer.js latencyFrom keys", d["latencyKeys"], keys)]
    # contract-dump.js gave stat i the value i + 1: the summary key of percentile i must carry it.
    got = {p["key"]: d["percentileProbe"]["latency"].get(p["key"]) for p in PERCENTILES}
    want = {p["key"]: i + 1 for i, p in enumerate(PERCENTILES)}
    bad.append(differ("summary-writer.js: summary key <- k6 stat (value i+1 = the contract's stat i)", got, want))
    return [b for b in bad if b]


def check_k6_metrics(dump):
    d = load_dump(dump)
    fields = ("name", "k6Type", "contains", "module")
    got = sorted(tuple(m[f] for f in fields) for m in d["metrics"])
    want = sorted(tuple(m[f] for f in fields) for m in OWN_METRICS)
    if got == want:
        return []
    return ["k6 metrics defined by scenarios/lib (name, k6 type, contents, module) differ from the contract:\n"
            f"  only in the modules:  {sorted(set(got) - set(want))}\n"
            f"  only in the contract: {sorted(set(want) - set(got))}"]


def check_k6_variables(dump):
    d = load_dump(dump)
    return [b for b in (differ("scenarios/lib/config.js DEFAULTS (name, default; in order)",
                               list(d["variables"].items()), [(v["name"], v["default"]) for v in VARIABLES]),) if b]


def check_k6_verdicts(dump):
    """scenarios/lib/verdicts.js RATE_HELD_SHARE and lag.js's limits against the contract's verdicts."""
    want = {k: v for k, v in CONTRACT["verdicts"].items() if k != "about"}
    got = load_dump(dump).get("verdicts")
    return [b for b in (differ("scenarios/lib/verdicts.js and lag.js (verdicts)", got, want),) if b]


def check_k6_runner_memory(dump):
    want = {k: v for k, v in CONTRACT["runnerMemory"].items() if k != "about"}
    return [b for b in (differ("scenarios/lib/memory-plan.js RUNNER_MEMORY", load_dump(dump).get("runnerMemory"), want),) if b]


def check_k6_warmup(dump):
    d = load_dump(dump)
    want = {k: CONTRACT["warmup"][k] for k in ("scenario", "role")}
    return [b for b in (differ("scenarios/lib/load.js WARMUP", d.get("warmup"), want),) if b]


def type_examples(v):
    """[(value, accepted)] for variable v: its type's examples, and a count's max and max + 1."""
    t = CONTRACT["variables"]["types"][v["type"]]
    cases = [(x, True) for x in t["accepts"]] + [(x, False) for x in t["refuses"]]
    if "max" in v:
        cases += [(str(v["max"]), True), (str(v["max"] + 1), False)]
    return cases


def check_k6_variable_types(dump):
    """Every variable's examples reached loadConfig (a real k6) and were accepted or refused as the
    contract says; a refusal names the variable."""
    probes = {(p["name"], p["value"]): p for p in load_dump(dump)["variableProbes"]}
    bad = []
    for v in VARIABLES:
        for value, accepted in type_examples(v):
            p = probes.get((v["name"], value))
            if p is None:
                bad.append(f"{v['name']}={value!r}: not probed")
            elif p["accepted"] != accepted:
                bad.append(f"scenarios/lib/config.js: {v['name']}={value!r} "
                           f"{'accepted' if p['accepted'] else 'refused'}, the contract says "
                           f"{'accepted' if accepted else 'refused'} ({v['type']}) {p['message']}")
            elif not accepted and v["name"] not in p["message"]:
                bad.append(f"scenarios/lib/config.js: the refusal of {v['name']}={value!r} does not name it: {p['message']}")
    return bad


def values_doc(dotted, value):
    """{a: {b: value}} for dotted key a.b."""
    doc = value
    for key in reversed(dotted.split(".")):
        doc = {key: doc}
    return doc


def typed(v, text):
    """The example as a user writes it in a values file: counts as numbers, bools as booleans
    (text that is neither stays a string, as a user's typo would)."""
    if v["type"] == "count" and re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    if v["type"] == "bool" and text in ("true", "false"):
        return text == "true"
    return text


def below_chart_min(v, text):
    """A duration the scenarios accept but the chart refuses: under the variable's chartMinMs."""
    from benchreport.duration import DurationError, parse_duration  # the grammar's Python parser
    if "chartMinMs" not in v:
        return False
    try:
        return parse_duration(text, "ms") < v["chartMinMs"]
    except DurationError:
        return False


def check_chart_variable_types(helm, chart):
    """helm template accepts each accepted example through the variable's values key and refuses
    each refused one, naming the key (values.schema.json or templates/validate.yaml). A refused
    example equal to the values default is skipped: there it means "the scenario's default"."""
    import concurrent.futures
    import subprocess
    import tempfile
    import yaml  # the project's venv has it (requirements.txt)
    values = yaml.safe_load((ROOT / "charts/bench/values.yaml").read_text())
    # The chart has no default runner image and refuses to render without one; 1 connection lets
    # maxConnections be judged on its own bounds (as the k6 probe does).
    # Memory enough for the largest VU ceiling the examples reach (the chart refuses a runner whose
    # GOMEMLIMIT cannot hold it, a check of its own, judged in the chart part).
    base = {"loadtest": {"connections": 1,
                         "runner": {"image": {"repository": "registry.example/bench/k6", "tag": "local"},
                                    "resources": {"requests": {"memory": "64Gi"}, "limits": {"memory": "64Gi"}}}}}
    cases = []
    for v in VARIABLES:
        if v["valuesKey"]:
            default = values_at(values, v["valuesKey"])
            cases += [(v, typed(v, text), accepted and not below_chart_min(v, text))
                      for text, accepted in type_examples(v) if accepted or typed(v, text) != default]

    def render(i, case):
        v, value, _ = case
        f = pathlib.Path(tmp, f"case-{i}.json")  # JSON: a string stays a string ("1e3")
        f.write_text(json.dumps(values_doc(v["valuesKey"], value)))
        return subprocess.run([helm, "template", "bench", chart, "-n", "bench", "-f", str(base_file), "-f", str(f)],
                              capture_output=True, text=True)

    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        base_file = pathlib.Path(tmp, "base.json")
        base_file.write_text(json.dumps(base))
        # helm waits on disk and the API of nothing: renders overlap well even on 2 cores
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(render, range(len(cases)), cases))
    for (v, value, accepted), r in zip(cases, results):
        if (r.returncode == 0) != accepted:
            bad.append(f"chart: {v['valuesKey']}={value!r} ({v['name']}, {v['type']}) "
                       f"{'rendered' if r.returncode == 0 else 'refused'}, the contract says "
                       f"{'accepted' if accepted else 'refused'}: {r.stderr.strip()[:300]}")
        elif not accepted and v["valuesKey"].split(".")[-1] not in r.stderr:
            bad.append(f"chart: the refusal of {v['valuesKey']}={value!r} does not name the key: {r.stderr.strip()[:300]}")
    return bad


def values_at(values, dotted):
    node = values
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return KeyError
        node = node[key]
    return node


def check_chart_variables():
    """The TestRun sets exactly the variables the contract says it sets, and every values key the
    contract names exists in charts/bench/values.yaml with the scenario's default or empty (0 for a
    count: the scenario's default); an empty key's comment states that default, empty = `<default>`."""
    import yaml  # the project's venv has it (requirements.txt)
    pod = (ROOT / "charts/bench/templates/loadtest/_pod.tpl").read_text()
    got = set(re.findall(r"\{name: (BENCH_[A-Z_]+),", pod))
    # an entry script's own settings the chart sets from values keys of their own (controller-restart's
    # from loadtest.controllerRestart): declared by a script, never bench's variables
    declared = script_settings()
    bad = [differ("charts/bench/templates/loadtest/_pod.tpl: the BENCH_* the TestRun sets", sorted(got - set(declared)),
                  sorted(v["name"] for v in VARIABLES if v["chartSets"]))]
    bad += [f"charts/bench/templates/loadtest/_pod.tpl sets {n}, a setting of {declared[n]}, which is also one of "
            "bench's variables" for n in sorted(got & set(declared)) if n in {v["name"] for v in VARIABLES}]
    values_text = (ROOT / "charts/bench/values.yaml").read_text()
    values = yaml.safe_load(values_text)
    comments = values_comments(values_text)
    for v in VARIABLES:
        if not v["valuesKey"]:
            continue
        have = values_at(values, v["valuesKey"])
        if have is KeyError:
            bad.append(f"charts/bench/values.yaml: no {v['valuesKey']} (sets {v['name']})")
            continue
        text = str(have).lower() if isinstance(have, bool) else str(have)
        if text not in (v["default"], "", "0"):
            bad.append(f"charts/bench/values.yaml: {v['valuesKey']} = {have!r}, the contract's default of "
                       f"{v['name']} is {v['default']!r} (or empty: the scenario's default)")
        elif text == "" and v["default"] and f"empty = `{v['default']}`" not in comments.get(v["valuesKey"], ""):
            bad.append(f"charts/bench/values.yaml: the comment of {v['valuesKey']} (empty: the scenario's default) "
                       f"does not say it: empty = `{v['default']}` ({v['name']})")
    return [b for b in bad if b]


def script_settings():
    """{name: entry script} of the settings the entry scripts declare (experiment({settings}))."""
    out = {}
    for js in sorted((ROOT / "scenarios").glob("*.js")):
        for name in re.findall(r"^\s+(BENCH_[A-Z0-9_]+): \{ type: ", js.read_text(), re.M):
            out[name] = f"scenarios/{js.name}"
    return out


def values_comments(text):
    """{dotted key: the comment lines right above it} of a values.yaml (two-space indents)."""
    out, path, pending = {}, [], []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            pending.append(stripped.lstrip("#").strip())
            continue
        m = re.match(r"^( *)([A-Za-z0-9_-]+):", line)
        if m:
            depth = len(m[1]) // 2
            path = path[:depth] + [m[2]]
            out[".".join(path)] = " ".join(pending)
        pending = []
    return out


def check_readme_variables():
    """The interfaces table: the same variables; a default given as a literal equals the contract's,
    'empty' is '', and a default in words (= connections) stands for the contract's ''."""
    rows = table_rows((ROOT / INTERFACES).read_text(), "| variable | default | meaning |")
    by_name = {v["name"]: v["default"] for v in VARIABLES}
    bad, seen = [], []
    for row in rows:
        for name in re.findall(r"`(BENCH_[A-Z_]+)`", row[0]):
            seen.append(name)
            literal = re.match(r"`([^`]*)`", row[1])
            got = literal.group(1) if literal else ""
            if name in by_name and got != by_name[name]:
                bad.append(f"{INTERFACES}: {name} default {row[1]!r}, the contract says {by_name[name]!r}")
    bad.append(differ(f"{INTERFACES}: the variables in the Scenario configuration table", sorted(seen), sorted(by_name)))
    return [b for b in bad if b]


def check_dashboards_fixture():
    """Every k6 series the dashboards may query (their fixture) is a contract metric with the same
    Prometheus name and type; check.py holds the dashboards to the fixture."""
    fixture = json.loads((ROOT / "ci/tools/dashboards/fixtures/metrics.json").read_text())
    listed = fixture["sources"]["k6"]["metrics"]
    by_prom = {m["prometheus"]: m["prometheusType"] for m in METRICS}
    bad = []
    for name, kind in listed.items():
        if name not in by_prom:
            bad.append(f"ci/tools/dashboards/fixtures/metrics.json: {name} is no metric of the contract")
        elif kind != by_prom[name]:
            bad.append(f"ci/tools/dashboards/fixtures/metrics.json: {name} is a {kind}, the contract says {by_prom[name]}")
    return bad


def table_rows(text, header_start):
    """The rows of the Markdown table whose header line starts with header_start, as cell lists."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(header_start)), None)
    if start is None:
        raise SystemExit(f"no table starting with {header_start!r}")
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def check_readme_metrics(readme):
    """The Metrics table: names, each row's type, and (scenarios/interfaces.md) the Prometheus series."""
    path = ROOT / readme
    rows = table_rows(path.read_text(), "| k6 metric | type |")
    bad, seen = [], []
    by_name = {m["name"]: m for m in METRICS}
    for row in rows:
        names = re.findall(r"`(bench_[a-z0-9_]+)`", row[0])
        if row[0] == "built-ins":
            names = [m["name"] for m in METRICS if m["module"] == BUILTIN]
        seen += names
        for n in names:
            m = by_name.get(n)
            if m is None:
                bad.append(f"{readme}: {n} is no metric of the contract")
                continue
            want = README_TYPES.get((m["k6Type"], m["contains"]))
            if m["module"] != BUILTIN and not row[1].startswith(want):
                bad.append(f"{readme}: {n} is a '{row[1]}', the contract says {want}")
        if len(row) >= 4 and "k6_" in row[3]:
            got = sorted(re.findall(r"`(k6_[a-z0-9_]+)`", row[3]))
            want = sorted(by_name[n]["prometheus"] for n in names if n in by_name)
            bad.append(differ(f"{readme}: Prometheus series of {', '.join(names)}", got, want))
    own = sorted(n for n in seen if by_name.get(n, {}).get("module") != BUILTIN)
    bad.append(differ(f"{readme}: bench metrics in the table", own, sorted(m["name"] for m in OWN_METRICS)))
    return [b for b in bad if b]


def check_readme_errors():
    bad = []
    rows = table_rows((ROOT / INTERFACES).read_text(), "| k6 metric | type |")
    row = next(r for r in rows if r[0] == "`bench_errors`")
    listed = re.search(r"`class` = ([a-z0-9_, ]+);", row[2])
    bad.append(differ(f"{INTERFACES} bench_errors classes", listed and [c.strip() for c in listed.group(1).split(",")], CLASSES))
    rows = table_rows((ROOT / "scenarios/README.md").read_text(), "| class | what | causes |")
    got = {}
    for r in rows:
        causes = sorted(re.findall(r"(?:^|, )`([a-z_0-9]+)`", r[2]))
        for cls in re.findall(r"`([a-z_0-9]+)`", r[0]):
            got[cls] = causes
    bad.append(differ("scenarios/README.md error classes and their causes", got,
                      {c: sorted(v) for c, v in CAUSES.items()}))
    return [b for b in bad if b]


def check_readme_summary():
    text = (ROOT / INTERFACES).read_text()
    m = re.search(r"#+ Summary JSON.*?```json\n(.*?)```", text, re.S)
    if not m:
        return [f"{INTERFACES}: no ```json block under '## Summary JSON'"]
    return [f"{INTERFACES} summary example: {e}" for e in schema_errors(json.loads(m.group(1)))]


def check_valid(*paths):
    bad = []
    for p in paths:
        bad += [f"{p}: {e}" for e in schema_errors(json.loads(pathlib.Path(p).read_text()))]
    return bad


# Crafted bad summaries: each a way a writer or a hand edit can drift; each must be rejected.
def _drop(path):
    def f(s):
        *parents, last = path
        for k in parents:
            s = s[k]
        del s[last]
    return f


def _set(path, value):
    def f(s):
        *parents, last = path
        for k in parents:
            s = s[k]
        s[last] = value
    return f


MUTATIONS = {
    "a class missing from errors": _drop(["errors", CLASSES[-1]]),
    "an unknown error class": _set(["errors", "http_3xx"], 0),
    "an unknown cause": _set(["error_causes", CLASSES[0], "martian"], 0),
    "a cause missing": _drop(["error_causes", CLASSES[0], CAUSES[CLASSES[0]][-1]]),
    "a percentile missing": _drop(["latency_ms", PERCENTILES[-1]["key"]]),
    "a percentile as text": _set(["latency_ms", PERCENTILES[2]["key"]], "4 ms"),
    "a negative request count": _set(["requests", "total"], -1),
    "another schema version": _set(["schema"], "bench.summary/v2"),
    "an unknown top-level key": _set(["latency"], {}),
    "a runner summary without its target URL": _drop(["settings", "target_url"]),
    "an attribution share over 1": _set(["attribution"], {
        "window_s": 3, "events": {"podkill": {"events": 1, "errors": {}, "errors_total": 2, "share": 2,
                                              "latency_outliers": 0}},
        "unattributed": {"errors": {}, "errors_total": 0, "share": 0, "latency_outliers": 0},
        "errors_total": 2, "latency_outliers": 0, "timeline": []}),
    "an attribution without its window": _set(["attribution"], {
        "events": {}, "unattributed": {"errors": {}, "errors_total": 0, "share": None, "latency_outliers": 0},
        "errors_total": 0, "latency_outliers": 0, "timeline": []}),
}


def check_rejects(path, name):
    doc = json.loads(pathlib.Path(path).read_text())
    if schema_errors(doc):
        return [f"{path} is not valid to begin with: {schema_errors(doc)[:3]}"]
    bad = copy.deepcopy(doc)
    MUTATIONS[name](bad)
    return [] if schema_errors(bad) else [f"{path} with {name}: the schema accepted it"]


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    cmd, args = argv[0], argv[1:]
    if cmd == "mutations":
        print("\n".join(MUTATIONS))
        return 0
    checks = {
        "self": check_self, "k6-errors": check_k6_errors, "k6-percentiles": check_k6_percentiles,
        "k6-metrics": check_k6_metrics, "k6-variables": check_k6_variables,
        "k6-variable-types": check_k6_variable_types, "k6-warmup": check_k6_warmup, "k6-verdicts": check_k6_verdicts,
        "k6-runner-memory": check_k6_runner_memory,
        "chart-variables": check_chart_variables, "chart-variable-types": check_chart_variable_types, "readme-variables": check_readme_variables,
        "dashboards-fixture": check_dashboards_fixture,
        "readme-metrics": check_readme_metrics, "readme-errors": check_readme_errors,
        "readme-summary": check_readme_summary, "valid": check_valid, "rejects": check_rejects,
    }
    if cmd not in checks:
        print(f"unknown check {cmd!r}; allowed: {', '.join(checks)}, mutations", file=sys.stderr)
        return 2
    bad = checks[cmd](*args)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""The rules of grafana/dashboard-linter that apply to bench's dashboards, in our own code.

The linter (a Go program) is not served by this machine's Go module proxy, so its rules were read
in its repository and are applied here under the names it gives them; each has a unit test in
test_check.py that breaks a copy of a real dashboard and sees the rule fail.

Applied (the linter checks some only on a few panel types; here they cover every panel with
queries, every data panel):
  template-datasource-rule        a datasource variable, named "datasource" and labelled "Data source"
  template-label-promql-rule      query variables are label_values/label_names/metrics/query_result
                                  of valid PromQL
  template-on-time-change-reload-rule  query variables refresh on time range change (refresh 2)
  panel-datasource-rule           panels use the datasource variable
  panel-title-description-rule    panels have a title and a description
  panel-units-rule                panels have a unit Grafana knows (an override's unit counts;
                                  value mappings or a stat of non-numeric fields need none)
  panel-no-targets-rule           data panels have queries
  target-promql-rule              every query is valid PromQL (Prometheus' own parser: promtool)
  target-rate-interval-rule       rate()/irate() range over $__rate_interval
  target-counter-agg-rule         a counter (*_total) is read through rate(), irate() or increase()
  uneditable-dashboard            editable is false
Not applied, and why:
  template-job-rule, template-instance-rule, target-job-rule, target-instance-rule: they want
    every query scoped by job and instance variables; bench's series are selected by run instead
    (testid, which check.py requires of every k6 selector).
  target-logql-rule, target-logql-auto-rule: no Loki queries.
The linter's own configuration has exclusions; ours are EXCLUSIONS below, each with its reason.

Usage: lint.py [DASHBOARD.json | FOLDER]...   prints one line per rule (`ok<TAB>...`, `FAIL<TAB>...`)
and each problem; exit 1 if a rule failed.
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[3]
import check  # beside this file: its walk over panels and queries, the metric fixture
from promql import GROUPING_KEYWORDS, KEYWORDS, selectors, tokens  # noqa: F401  (lint.selectors: the tests)

DATA_PANEL_TYPES = check.DATA_PANEL_TYPES
VARIABLE_FUNCTIONS = ("label_values", "label_names", "metrics", "query_result")
RATE_FUNCTIONS = ("rate", "irate")
COUNTER_FUNCTIONS = ("rate", "irate", "increase")
# The event counters of the run overview's attribution row (scenarios/contract.json eventAttribution).
EVENT_COUNTERS = {"k6_bench_scale_events_total"} | {s["metric"] for s in json.loads(
    (check.ROOT / "scenarios/contract.json").read_text())["eventAttribution"]["sources"]}
# Unit ids of Grafana's unit picker (the categories a benchmark's panels draw from): misc, data,
# data rate, time, throughput, boolean.
UNITS = {
    "none", "short", "string", "percent", "percentunit", "sci", "locale", "hex", "hex0x",
    "bytes", "decbytes", "bits", "decbits", "kbytes", "deckbytes", "mbytes", "decmbytes", "gbytes",
    "decgbytes", "tbytes", "dectbytes",
    "pps", "binBps", "Bps", "binbps", "bps", "KiBs", "Kibits", "KBs", "Kbits", "MiBs", "Mibits", "MBs",
    "Mbits", "GiBs", "Gibits", "GBs", "Gbits",
    "hertz", "ns", "µs", "ms", "s", "m", "h", "d", "dtdurationms", "dtdurations", "dthms", "dtdhms",
    "timeticks", "clockms", "clocks", "dateTimeAsIso", "dateTimeAsLocal", "dateTimeFromNow",
    "cps", "ops", "reqps", "rps", "wps", "iops", "cpm", "opm", "rpm", "wpm",
    "bool", "bool_yes_no", "bool_on_off",
}


# ---------------------------------------------------------------------------------------------
# Where the rules look

def panels_of(dash):
    return (p for p, _row in check.walk_panels(dash))


def targets_of(dash):
    """(where, expr, instant) of every panel query and annotation query."""
    return ((q["where"], q["expr"], q["instant"]) for q in check.queries_of(dash) if q["kind"] != "variable")


def query_variables(dash):
    return ((q["variable"], q["expr"]) for q in check.queries_of(dash) if q["kind"] == "variable")


# ---------------------------------------------------------------------------------------------
# Exclusions (the linter's configuration has the same mechanism): rule, predicate, reason.

def count_so_far(sel, instant):
    over_range = sel["parent"] in ("max_over_time", "min_over_time") and sel["range"] == "$__range"
    return over_range or (instant and sel["subquery"])


def fixture_gauge(sel, _instant):
    return check.load_fixture(check.DEFAULT_FIXTURE).get(sel["name"], ("",))[0] == "gauge"


EXCLUSIONS = [
    ("target-rate-interval-rule",
     lambda sel, instant: instant and sel["range"] == "$__range",
     "whole-run percentiles and rates: an instant query over the dashboard's range ($__range)"),
    ("target-counter-agg-rule", count_so_far,
     "a run's count so far (whole-run totals, routes created): k6 pushes each runner's cumulative "
     "count from 0 each run, so its last value over $__range is exact where increase() would "
     "extrapolate"),
    ("target-counter-agg-rule",
     lambda sel, instant: sel["parent"] in ("timestamp", "count"),
     "the series' push times (timestamp) or how many series exist (count), not the counter's value"),
    ("target-counter-agg-rule",
     lambda sel, _instant: sel["parent"] == "sum" and sel["name"] in EVENT_COUNTERS and sel["offset"] in (None, "$window"),
     "the attribution window (run overview, Errors near events): an event counter summed now minus the "
     "same W ago (offset $window) says whether an event came within W at any push interval, where "
     "increase() over W needs two samples inside it"),
    ("target-counter-agg-rule", fixture_gauge,
     "a gauge whose name ends in _total (NGINX Inc's worker processes and resources; typed gauge, "
     "with its citation, in fixtures/metrics.json)"),
]


def excluded(rule, sel, instant):
    return any(r == rule and match(sel, instant) for r, match, _ in EXCLUSIONS)


# ---------------------------------------------------------------------------------------------
# The rules: each takes a dashboard, returns problem strings.

def template_datasource_rule(dash):
    ds = [v for v in dash.get("templating", {}).get("list", []) if v.get("type") == "datasource"]
    if not ds:
        return ["does not have a templated data source"]
    out = []
    for v in ds:
        wanted = {f'{v.get("query", "").lower()}_datasource'} | ({"datasource"} if len(ds) == 1 else set())
        if v.get("name") not in wanted:
            out.append(f'data source variable {v.get("name")!r} should be named {" or ".join(sorted(wanted))}')
        label = f'{v.get("query", "").title()} data source'
        if v.get("label") not in ({label, "Data source"} if len(ds) == 1 else {label}):
            out.append(f'data source variable labelled {v.get("label")!r} should be labelled "Data source"')
    return out


def template_label_promql_rule(dash, parse_errors):
    out = []
    for v, q in query_variables(dash):
        m = re.fullmatch(r"\s*([a-z_]+)\((.*)\)\s*", q, re.S)
        if not m:
            out.append(f'variable {v.get("name")!r}: query {q!r} is not a function call')
        elif m.group(1) not in VARIABLE_FUNCTIONS:
            out.append(f'variable {v.get("name")!r}: {m.group(1)}() is not one of {", ".join(VARIABLE_FUNCTIONS)}')
        elif m.group(1) == "label_values":
            inner = re.fullmatch(r"(.*?)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*", m.group(2), re.S)
            expr = inner.group(1) if inner else None
            if expr and expr in parse_errors:
                out.append(f'variable {v.get("name")!r}: invalid PromQL {expr!r}: {parse_errors[expr]}')
    return out


def template_on_time_change_reload_rule(dash):
    return [f'variable {v.get("name")!r} should refresh on time range change (refresh 2), has {v.get("refresh")!r}'
            for v, _ in query_variables(dash) if v.get("refresh") != 2]


def panel_datasource_rule(dash):
    names = [v.get("name") for v in dash.get("templating", {}).get("list", []) if v.get("type") == "datasource"]
    allowed = {f"${n}" for n in names} | {f"${{{n}}}" for n in names}
    out = []
    for p in panels_of(dash):
        if p.get("type") not in DATA_PANEL_TYPES:
            continue
        ds = p.get("datasource")
        uid = ds.get("uid") if isinstance(ds, dict) else ds
        if uid not in allowed:
            out.append(f'panel {p.get("id")} "{p.get("title")}" does not use a templated datasource, uses {uid!r}')
    return out


def panel_title_description_rule(dash):
    return [f'panel {p.get("id")} "{p.get("title")}" has no title or no description'
            for p in panels_of(dash)
            if p.get("type") in DATA_PANEL_TYPES and not (p.get("title") and p.get("description"))]


def panel_unit(p):
    fc = p.get("fieldConfig") or {}
    for o in fc.get("overrides", []):
        for prop in o.get("properties", []):
            if prop.get("id") == "unit":
                return prop.get("value")
    return (fc.get("defaults") or {}).get("unit", "")


def panel_units_rule(dash):
    out = []
    for p in panels_of(dash):
        if p.get("type") not in DATA_PANEL_TYPES:
            continue
        fc = p.get("fieldConfig") or {}
        if (fc.get("defaults") or {}).get("mappings") or any(
                prop.get("id") == "mappings" and prop.get("value")
                for o in fc.get("overrides", []) for prop in o.get("properties", [])):
            continue
        if p.get("type") == "stat" and (p.get("options") or {}).get("reduceOptions", {}).get("fields", ""):
            continue
        unit = panel_unit(p)
        if unit not in UNITS:
            out.append(f'panel {p.get("id")} "{p.get("title")}" has no or an unknown unit: {unit!r}')
    return out


def panel_no_targets_rule(dash):
    return [f'panel {p.get("id")} "{p.get("title")}" has no targets'
            for p in panels_of(dash) if p.get("type") in DATA_PANEL_TYPES and not p.get("targets")]


def target_promql_rule(dash, parse_errors):
    return [f"{where}: invalid PromQL: {parse_errors[expr]}" for where, expr, _ in targets_of(dash)
            if expr in parse_errors]


def target_rate_interval_rule(dash):
    out = []
    for where, expr, instant in targets_of(dash):
        for sel in selectors(expr):
            if sel["range"] is None or sel["subquery"] or sel["range"] == "$__rate_interval":
                continue
            if sel["parent"] in RATE_FUNCTIONS and not excluded("target-rate-interval-rule", sel, instant):
                out.append(f"{where}: {sel['parent']}() over [{sel['range']}]; should use $__rate_interval")
    return out


def target_counter_agg_rule(dash):
    out = []
    for where, expr, instant in targets_of(dash):
        for sel in selectors(expr):
            if not sel["name"].endswith("_total"):
                continue
            ok = sel["range"] is not None and not sel["subquery"] and sel["parent"] in COUNTER_FUNCTIONS
            if not ok and not excluded("target-counter-agg-rule", sel, instant):
                out.append(f"{where}: counter {sel['name']} is not aggregated with rate, irate or increase")
    return out


def uneditable_dashboard(dash):
    return ["is editable, it should be set to 'editable: false'"] if dash.get("editable", True) else []


# ---------------------------------------------------------------------------------------------
# PromQL validity through Prometheus' own parser

def expand_for_parsing(expr, dash):
    """Grafana variables replaced so the text parses: durations for the interval variables, a
    word for the others (the linter does the same)."""
    durations = {"__rate_interval": "1m", "__interval": "1m", "__range": "1h", "__range_s": "3600",
                 "__range_ms": "3600000", "__interval_ms": "60000"}
    variables = dash.get("templating", {}).get("list", [])
    names = {v.get("name") for v in variables}
    # a textbox's own default where it has one (the window variable's is a duration: offset $window)
    defaults = {v.get("name"): v.get("query") for v in variables if v.get("type") == "textbox" and v.get("query")}

    def repl(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name in durations:
            return durations[name]
        if name in defaults:
            return defaults[name]
        return "bench" if name in names else m.group(0)  # an unknown variable stays and fails
    return re.sub(r"\$\{([A-Za-z_]\w*)(?::\w+)?\}|\[\[([A-Za-z_]\w*)\]\]|\$([A-Za-z_]\w*)", repl, expr)


def promql_parse_errors(dashboards, promtool="promtool"):
    """{expr: error} for every query (and label_values argument) Prometheus cannot parse, judged by
    `promtool check rules` on a rules file holding each expression."""
    exprs = {}
    for dash in dashboards:
        for _, expr, _ in targets_of(dash):
            exprs[expr] = expand_for_parsing(expr, dash)
        for _, q in query_variables(dash):
            m = re.fullmatch(r"\s*label_values\((.*?)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*", q, re.S)
            if m:
                exprs[m.group(1)] = expand_for_parsing(m.group(1), dash)
    errors = {}
    originals = list(exprs)
    with tempfile.TemporaryDirectory() as tmp:
        # One group per expression: promtool names the group of each error.
        groups = [{"name": f"q{i}", "rules": [{"record": "bench:parse", "expr": exprs[o] or "absent"}]}
                  for i, o in enumerate(originals)]
        path = pathlib.Path(tmp) / "rules.json"
        path.write_text(json.dumps({"groups": groups}))
        if not shutil.which(promtool):
            raise RuntimeError(f"{promtool} not found: it comes with Debian's prometheus package, which "
                               "ci/test/all.sh installs from ci/test/dashboards/packages.txt")
        r = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True)
        for line in (r.stdout + r.stderr).splitlines():
            m = re.search(r'group "q(\d+)", rule \d+, "[^"]*": (.*)', line)
            if m:
                errors[originals[int(m.group(1))]] = m.group(2)
        if r.returncode != 0 and not errors:
            raise RuntimeError(f"promtool check rules failed: {r.stdout}{r.stderr}")
    for o in originals:
        if not o.strip():
            errors[o] = "empty query"
    return errors


RULES = [
    ("template-datasource-rule", template_datasource_rule, False),
    ("template-label-promql-rule", template_label_promql_rule, True),
    ("template-on-time-change-reload-rule", template_on_time_change_reload_rule, False),
    ("panel-datasource-rule", panel_datasource_rule, False),
    ("panel-title-description-rule", panel_title_description_rule, False),
    ("panel-units-rule", panel_units_rule, False),
    ("panel-no-targets-rule", panel_no_targets_rule, False),
    ("target-promql-rule", target_promql_rule, True),
    ("target-rate-interval-rule", target_rate_interval_rule, False),
    ("target-counter-agg-rule", target_counter_agg_rule, False),
    ("uneditable-dashboard", uneditable_dashboard, False),
]


def lint(named_dashboards, promtool="promtool"):
    """{rule: [problem, ...]} over (name, dashboard) pairs; every rule is present."""
    parse_errors = promql_parse_errors([d for _, d in named_dashboards], promtool)
    results = {}
    for rule, fn, needs_parser in RULES:
        results[rule] = [f"{name}: {p}" for name, dash in named_dashboards
                         for p in (fn(dash, parse_errors) if needs_parser else fn(dash))]
    return results


def main(argv):
    paths = [pathlib.Path(a) for a in argv] or [ROOT / "dashboards"]
    files = [f for p in paths for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    if not files:
        sys.exit("error: no dashboards given")
    results = lint([(f.name, json.loads(f.read_text())) for f in files])
    for rule, problems in results.items():
        if problems:
            print(f"FAIL\tgrafana/dashboard-linter {rule}: {len(problems)} problems")
            for p in problems:
                print(f"      {rule}: {p}", file=sys.stderr)
        else:
            print(f"ok\tgrafana/dashboard-linter {rule} holds for {len(files)} dashboards")
    return 1 if any(results.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

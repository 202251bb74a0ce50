#!/usr/bin/env python3
"""Checks the bench Grafana dashboards, and runs every query they contain against a real Prometheus.

Offline (always):
  - every dashboard parses; uid/title/schemaVersion present; uids unique
  - variables: `datasource` (type datasource, prometheus) and `testid` exist; no `__inputs`
  - no hard-coded datasource UID anywhere (panels, targets, annotations, variables)
  - unique panel ids, sane grid positions that do not overlap (top level and inside each row)
  - every data panel has a title, a unit, targets with unique refIds and an expression
  - rate()/irate()/increase() ranges use $__rate_interval ($__range only in instant queries)
  - every k6_* selector is scoped to the run: testid=~"$testid"
  - every metric name a query references is listed in the metric fixture (with its source)
With --prometheus URL (a real Prometheus, e.g. 2.42 with native histograms):
  - syntax: every query (panels, annotations, variables) is sent to Prometheus; a parse error fails
  - data: per panel, whether its queries return samples for --testid over [--start, --end]
  - --require-data SELECTOR: panels that must have data ("<dashboard uid>/<panel title glob>",
    e.g. "bench-run-overview/*", "!<uid>/<glob>" to take a match back, or a preset @k6, @routes,
    @controller-restart, @dataplane-scale, @controller-upgrade, @backend-failover, @long-lived, @traefik, @cadvisor); a selector
    matching nothing fails

Exit status: 0 all good, 1 a check failed, 2 bad usage.
"""
import argparse
import datetime
import fnmatch
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
# How a dashboard's queries run outside Grafana lives beside the dashboards (the picture renderer
# runs the same); its Prometheus client is the report's. Both packages come from this checkout's
# PYTHONPATH (harness/pythonpath.py; pytest.ini's pythonpath inside pytest).
from benchdashboards.queries import (  # noqa: F401  (re-exported: check.Prometheus, check.walk_panels, ...)
    TESTID_RE, Prometheus, UsageError, parse_duration, parse_time, substitute, substitutions, walk_panels)
# PromQL's structure: the one reading both checkers share (promql.py, beside this file).
from promql import metric_names, selectors  # noqa: E402,F401  (check.metric_names: the tests)
DEFAULT_DASHBOARDS = ROOT / "dashboards"
DEFAULT_FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "metrics.json"

DATA_PANEL_TYPES = {"timeseries", "stat", "table", "barchart", "bargauge", "gauge", "heatmap",
                    "piechart", "histogram", "state-timeline", "status-history", "xychart", "trend"}
RATE_FUNCS = ("rate", "irate", "increase")
# Named selector sets for --require-data @NAME, so callers do not hard-code panel titles.
PRESETS = {
    # every panel fed by k6 alone (load, latency, errors, churn telemetry), in all dashboards, except
    # the route, controller-restart, dataplane-scale, controller-upgrade, backend-failover and long-lived panels: only
    # those experiments feed them ("!" takes a match back), the Warm-up annotation: only a run with
    # loadtest.warmup feeds it, the route annotations (routes preset), and Controller reloads: only a
    # controller that reloads feeds it
    "k6": ["bench-run-overview/*", "bench-comparison/*", "bench-controllers/Run:*",
           "bench-controllers/variable testid", "!bench-run-overview/Route*", "!bench-run-overview/Controller*",
           "!bench-run-overview/Data-plane*", "!bench-run-overview/Rollout*", "!bench-run-overview/Backend failover*",
           "!bench-run-overview/Stream*",
           "!bench-run-overview/annotation Warm-up", "!bench-run-overview/annotation Route*",
           "!bench-run-overview/annotation Controller reloads"],
    # the run overview's Warm-up annotation, fed by a run with a warm-up
    "warmup": ["bench-run-overview/annotation Warm-up"],
    # the run overview's Routes row, fed by route-propagation, route-change and route-scale, and its
    # route annotations (the emit run has both; a route-propagation run changes no route)
    "routes": ["bench-run-overview/Route*", "bench-run-overview/annotation Route*"],
    # the run overview's Controller restart row, fed by controller-restart
    "controller-restart": ["bench-run-overview/Controller*"],
    # the run overview's Data-plane scale row, fed by dataplane-scale
    "dataplane-scale": ["bench-run-overview/Data-plane*"],
    # the run overview's Controller upgrade row, fed by controller-upgrade
    "controller-upgrade": ["bench-run-overview/Rollout*"],
    # the run overview's Backend failover row, fed by backend-failover
    "backend-failover": ["bench-run-overview/Backend failover*"],
    # the run overview's Long-lived streams row, fed by long-lived
    "long-lived": ["bench-run-overview/Stream*"],
    # Traefik panels that have data whenever Traefik serves traffic (error panels need errors)
    "traefik": ["bench-controllers/Controllers with metrics", "bench-controllers/Traefik: configuration reloads",
                "bench-controllers/Traefik: time since last successful reload",
                "bench-controllers/Traefik: open connections", "bench-controllers/Traefik: requests by status*",
                "bench-controllers/Traefik: latency*"],
    # controller CPU and memory from the kubelet's cAdvisor
    "cadvisor": ["bench-controllers/Controller CPU*", "bench-controllers/Controller memory*",
                 "bench-controllers/variable controller_namespace"],
}


# ---------------------------------------------------------------------------------------------
# Dashboard walking

def load_dashboards(paths):
    files = []
    for p in paths:
        p = pathlib.Path(p)
        if p.is_dir():
            files.extend(sorted(p.glob("*.json")))
        elif p.is_file():
            files.append(p)
        else:
            raise UsageError(f"dashboard path {p} does not exist (give a folder of *.json or files)")
    if not files:
        raise UsageError(f"no dashboard *.json found in {', '.join(map(str, paths))}")
    return files


def queries_of(dash):
    """Every PromQL expression in a dashboard, as dicts: where, kind, expr, instant, panel."""
    out = []
    for panel, _row in walk_panels(dash):
        for t in panel.get("targets", []) or []:
            out.append({"where": f'panel {panel.get("id")} "{panel.get("title")}" {t.get("refId")}',
                        "kind": "panel", "expr": t.get("expr", ""), "instant": bool(t.get("instant")),
                        "panel": panel, "target": t})
    for i, a in enumerate(dash.get("annotations", {}).get("list", [])):
        if a.get("builtIn"):
            continue
        # A Prometheus annotation's query is in its target (older dashboards: expr beside it).
        expr = (a.get("target") or {}).get("expr") or a.get("expr", "")
        out.append({"where": f'annotation "{a.get("name")}"', "kind": "annotation",
                    "expr": expr, "instant": False, "annotation": a, "index": i})
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        out.append({"where": f'variable "{v.get("name")}"', "kind": "variable", "expr": q,
                    "instant": True, "variable": v})
    return out


# ---------------------------------------------------------------------------------------------
# PromQL text helpers (no full parser: Prometheus itself judges syntax when --prometheus is given)

def variable_query_to_promql(q):
    """Grafana Prometheus variable functions -> a PromQL expression with the same metric."""
    m = re.fullmatch(r"\s*label_values\(\s*(.*?)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*", q)
    if m:
        return m.group(1)
    m = re.fullmatch(r"\s*label_values\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*", q)
    if m:
        return None  # label over all series: no metric
    m = re.fullmatch(r"\s*(?:query_result|metrics)\((.*)\)\s*", q)
    if m:
        return m.group(1)
    return q


# ---------------------------------------------------------------------------------------------
# Conventions

def is_variable_ref(uid):
    return isinstance(uid, str) and uid.startswith("$")


def datasource_problems(obj, where):
    ds = obj.get("datasource")
    if ds is None:
        return []
    if isinstance(ds, str):
        ok = ds.startswith("$") or ds in ("-- Grafana --", "-- Mixed --", "-- Dashboard --")
        return [] if ok else [f"{where}: datasource {ds!r} is a name or UID from one machine; use ${{datasource}}"]
    uid = ds.get("uid")
    if ds.get("type") in ("grafana", "datasource") or uid in ("-- Grafana --", "grafana", None):
        return []
    if not is_variable_ref(uid):
        return [f"{where}: hard-coded datasource uid {uid!r}; use {{\"type\": \"prometheus\", \"uid\": \"${{datasource}}\"}}"]
    return []


def rate_problems(expr, instant, where):
    problems = []
    for sel in selectors(expr):
        rng, func = sel["range"], sel["parent"]
        if func not in RATE_FUNCS or rng is None or sel["subquery"]:
            continue  # a subquery inside the argument is judged by the outer function
        if rng == "$__rate_interval" or (instant and rng == "$__range"):
            continue
        allowed = "$__rate_interval" + (" or $__range" if instant else "")
        problems.append(f"{where}: {func}() over [{rng}]; use [{allowed}]")
    if not instant:
        for rng in re.findall(r"\[(\$__range):[^\]]*\]", expr):
            problems.append(f"{where}: subquery over [{rng}:] in a range query; only instant queries may span $__range")
    return problems


def k6_scope_problems(expr, where):
    problems = []
    for sel in selectors(expr):
        if sel["name"].startswith("k6_") and 'testid=~"$testid"' not in (sel["matchers"] or ""):
            problems.append(f'{where}: {sel["name"]} is not scoped to the run; add testid=~"$testid"')
    return problems


def grid_problems(panels, where):
    problems, cells = [], {}
    for p in panels:
        g = p.get("gridPos")
        name = f'{where} panel {p.get("id")} "{p.get("title")}"'
        if not isinstance(g, dict) or not all(isinstance(g.get(k), int) for k in "xywh"):
            problems.append(f"{name}: gridPos must have integer x, y, w, h")
            continue
        if g["w"] < 1 or g["h"] < 1 or g["x"] < 0 or g["y"] < 0 or g["x"] + g["w"] > 24:
            problems.append(f"{name}: gridPos {g} is outside the 24-column grid")
            continue
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                other = cells.get((x, y))
                if other is not None:
                    problems.append(f'{name}: overlaps panel {other.get("id")} "{other.get("title")}"')
                    break
                cells[(x, y)] = p
            else:
                continue
            break
    return problems


def load_fixture(path):
    try:
        data = json.loads(pathlib.Path(path).read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"metric fixture {path}: {e}")
    known = {}
    for source, entry in data.get("sources", {}).items():
        if not entry.get("cite"):
            raise UsageError(f"metric fixture {path}: source {source!r} cites nothing (add 'cite')")
        for name, kind in entry.get("metrics", {}).items():
            if kind not in ("counter", "gauge", "histogram", "native_histogram", "summary"):
                raise UsageError(f"metric fixture {path}: {name} has type {kind!r}; allowed: counter, "
                                 "gauge, histogram, native_histogram, summary")
            known[name] = (kind, source)
            if kind in ("histogram", "summary"):
                for suffix in ("_sum", "_count") + (("_bucket",) if kind == "histogram" else ()):
                    known[name + suffix] = (kind, source)
    return known


def fixture_problems(expr, where, known):
    problems = []
    for name in metric_names(expr):
        if name not in known:
            hint = ""
            if name.endswith("_bucket") and known.get(name[:-7], ("",))[0] == "native_histogram":
                hint = " (it is a native histogram: no _bucket series; use histogram_quantile on the name itself)"
            problems.append(f"{where}: metric {name} is not in the metric fixture{hint}")
    return problems


def convention_problems(path, dash, known):
    """All offline problems of one dashboard, as readable strings."""
    where = path.name
    problems = []
    for key in ("uid", "title", "schemaVersion", "panels", "templating"):
        if key not in dash:
            problems.append(f"{where}: missing top-level {key!r}")
    if "__inputs" in dash:
        problems.append(f"{where}: has __inputs (import-only format); sidecar dashboards must use the datasource variable")
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        problems.append(f'{where}: needs a variable "datasource" of type datasource with query "prometheus"')
    if "testid" not in variables:
        problems.append(f'{where}: needs a variable "testid" (runs are selected by their testid tag)')
    for name, v in variables.items():
        problems += datasource_problems(v, f'{where} variable "{name}"')
    for a in dash.get("annotations", {}).get("list", []):
        problems += datasource_problems(a, f'{where} annotation "{a.get("name")}"')

    ids = {}
    top, rows = [], {}
    for panel, row in walk_panels(dash):
        pid = panel.get("id")
        name = f'{where} panel {pid} "{panel.get("title")}"'
        if pid in ids:
            problems.append(f"{name}: id {pid} is used twice")
        ids[pid] = panel
        problems += datasource_problems(panel, name)
        if row is None:
            top.append(panel)
        else:
            rows.setdefault(row, []).append(panel)
        if panel.get("type") == "row":
            continue
        if not panel.get("title"):
            problems.append(f"{name}: has no title")
        if panel.get("type") in DATA_PANEL_TYPES:
            unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
            if not unit:
                problems.append(f"{name}: no unit (fieldConfig.defaults.unit)")
            tgts = panel.get("targets") or []
            if not tgts:
                problems.append(f"{name}: has no queries")
            refs = [t.get("refId") for t in tgts]
            if len(set(refs)) != len(refs) or None in refs:
                problems.append(f"{name}: refIds must be present and unique, got {refs}")
            for t in tgts:
                problems += datasource_problems(t, f'{name} {t.get("refId")}')
                if not (t.get("expr") or "").strip():
                    problems.append(f'{name} {t.get("refId")}: empty expression')
    problems += grid_problems([p for p in top], where)
    for row, children in rows.items():
        problems += grid_problems(children, f'{where} row "{row}"')

    for q in queries_of(dash):
        w = f"{where} {q['where']}"
        expr = q["expr"]
        if q["kind"] == "variable":
            expr = variable_query_to_promql(expr) or ""
        else:
            problems += rate_problems(expr, q["instant"], w)
            problems += k6_scope_problems(expr, w)
        problems += fixture_problems(expr, w, known)
    return problems


# ---------------------------------------------------------------------------------------------
# Running queries

def count_result(resp):
    data = resp.get("data", {})
    result = data.get("result", [])
    if data.get("resultType") == "matrix":
        return len(result), sum(len(r.get("values", [])) + len(r.get("histograms", [])) for r in result)
    if data.get("resultType") in ("vector",):
        return len(result), len(result)
    if data.get("resultType") == "scalar":
        return 1, 1
    return 0, 0


def run_dashboard(path, dash, prom, testids, start, end, step, rate_interval):
    """Runs every query; returns (panel reports, syntax errors)."""
    values = substitutions(dash, testids, start, end, step, rate_interval)
    uid = dash.get("uid")
    panels, errors = {}, []
    for q in queries_of(dash):
        if q["kind"] == "variable":
            v = q["variable"]
            raw = v.get("query")
            raw = raw.get("query", "") if isinstance(raw, dict) else raw
            m = re.fullmatch(r"\s*label_values\(\s*(?:(.*?)\s*,\s*)?([A-Za-z_]\w*)\s*\)\s*", raw or "")
            key = f'variable:{v.get("name")}'
            rep = panels.setdefault(key, {"uid": uid, "key": key, "title": f'variable {v.get("name")}',
                                          "queries": [], "data": False})
            if m:
                match = substitute(m.group(1), values) if m.group(1) else None
                r = prom.label_values(m.group(2), match, start, end)
                ok = r.get("status") == "success"
                vals = r.get("data", []) if ok else []
                rep["queries"].append({"ref": "var", "expr": raw, "ok": ok, "error": r.get("error"),
                                       "series": len(vals), "samples": len(vals), "values": vals[:20]})
                rep["data"] = rep["data"] or bool(vals)
                if not ok:
                    errors.append(f"{path.name} {q['where']}: {r.get('error')}")
            continue
        expr = substitute(q["expr"], values)
        r = prom.query(expr, start, end, step, q["instant"])
        ok = r.get("status") == "success"
        series, samples = count_result(r) if ok else (0, 0)
        if q["kind"] == "panel":
            p = q["panel"]
            key = f'{p.get("id")}'
            title = p.get("title")
            ref = q["target"].get("refId")
        else:
            key = f'annotation:{q["annotation"].get("name")}'
            title = f'annotation {q["annotation"].get("name")}'
            ref = "ann"
        rep = panels.setdefault(key, {"uid": uid, "key": key, "title": title, "queries": [], "data": False})
        entry = {"ref": ref, "expr": expr, "ok": ok, "error": r.get("error"), "series": series,
                 "samples": samples}
        if ok and q["instant"]:
            entry["result"] = [{"metric": x.get("metric", {}), "value": x.get("value", [0, None])[1]}
                               for x in r["data"].get("result", [])[:50] if isinstance(x, dict)]
        rep["queries"].append(entry)
        rep["data"] = rep["data"] or samples > 0
        if not ok:
            errors.append(f"{path.name} {q['where']}: {r.get('errorType', 'error')}: {r.get('error')}")
    return list(panels.values()), errors


def expand_presets(selectors_):
    out = []
    for sel in selectors_:
        if sel.startswith("@"):
            if sel[1:] not in PRESETS:
                raise UsageError(f"--require-data preset {sel!r} is unknown; presets: "
                                 + ", ".join("@" + p for p in PRESETS))
            out += PRESETS[sel[1:]]
        else:
            out.append(sel)
    return out


def select_required(selectors_, reports):
    """Marks reports matched by selectors as required, in order ("!sel" unmarks what sel matches);
    returns selectors that matched nothing."""
    unmatched = []
    for sel in expand_presets(selectors_):
        required = not sel.startswith("!")
        sel = sel.lstrip("!")
        if "/" not in sel:
            raise UsageError(f"--require-data {sel!r} must be '<dashboard uid>/<panel title glob>', "
                             "e.g. 'bench-run-overview/*'")
        uid_glob, title_glob = sel.split("/", 1)
        hit = False
        for r in reports:
            if fnmatch.fnmatchcase(r["uid"] or "", uid_glob) and fnmatch.fnmatchcase(r["title"] or "", title_glob):
                r["required"] = required
                hit = True
        if not hit:
            unmatched.append(sel)
    return unmatched


# ---------------------------------------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=[str(DEFAULT_DASHBOARDS)],
                    help="dashboard files or folders (default: dashboards/)")
    ap.add_argument("--fixture", default=str(DEFAULT_FIXTURE), help="metric-name fixture JSON")
    ap.add_argument("--prometheus", help="Prometheus base URL; without it only offline checks run")
    ap.add_argument("--testid", help="run id(s) to substitute for $testid, comma-separated")
    ap.add_argument("--start", default="now-1h", help="range start (unix, RFC 3339, now-30m); default now-1h")
    ap.add_argument("--end", default="now", help="range end; default now")
    ap.add_argument("--step", default="", help="range query step (default: range/120, at least 5s)")
    ap.add_argument("--rate-interval", default="1m",
                    help="value for $__rate_interval (Grafana: max(4 x scrape interval, step)); default 1m")
    ap.add_argument("--require-data", action="append", default=[], metavar="SELECTOR",
                    help="'<uid>/<title glob>' or @preset (" + ", ".join("@" + p for p in PRESETS)
                    + ") of panels that must return data (repeatable, comma-separated)")
    ap.add_argument("--report", help="write the per-panel report as JSON to this file")
    ap.add_argument("--quiet", action="store_true", help="print problems and the summary only")
    return ap.parse_args(argv)


def read_dashboards(paths, known):
    """[(file, dashboard)] of the files that parse, and the problems: unreadable files, a uid used
    twice, and each dashboard's convention problems."""
    dashboards, problems, uids = [], [], {}
    for f in load_dashboards(paths):
        try:
            dash = json.loads(f.read_text())
        except ValueError as e:
            problems.append(f"{f.name}: not valid JSON: {e}")
            continue
        if not isinstance(dash, dict):
            problems.append(f"{f.name}: top level must be a JSON object (a dashboard)")
            continue
        uid = dash.get("uid")
        if uid in uids:
            problems.append(f"{f.name}: uid {uid!r} already used by {uids[uid]}")
        uids[uid] = f.name
        dashboards.append((f, dash))
        problems += convention_problems(f, dash, known)
    return dashboards, problems


def print_conventions(dashboards, problems):
    n_queries = sum(len(queries_of(d)) for _, d in dashboards)
    n_panels = sum(1 for _, d in dashboards for p, _ in walk_panels(d) if p.get("type") != "row")
    for p in problems:
        print(f"problem: {p}")
    print(f"conventions: {len(dashboards)} dashboards, {n_panels} panels, {n_queries} queries, "
          f"{len(problems)} problems")


def query_window(args):
    """(testids, start, end, step, rate_interval) of the live checks, or a UsageError naming the argument."""
    if not args.testid:
        raise UsageError("--prometheus needs --testid (the run whose data the panels should show)")
    testids = [t for t in args.testid.split(",") if t]
    for t in testids:
        if not TESTID_RE.match(t):
            raise UsageError(f"--testid {t!r} may contain only letters, digits and . _ : -")
    now = datetime.datetime.now().timestamp()
    start, end = parse_time(args.start, now), parse_time(args.end, now)
    if end <= start:
        raise UsageError(f"--start {args.start!r} must be before --end {args.end!r}")
    step = parse_duration(args.step, "--step") if args.step else max(5, int((end - start) / 120))
    rate_interval = parse_duration(args.rate_interval, "--rate-interval")
    return testids, start, end, step, rate_interval


def run_dashboards(dashboards, prom, window):
    """Every panel's report and the query errors, over all dashboards."""
    reports, syntax_errors = [], []
    for f, dash in dashboards:
        r, e = run_dashboard(f, dash, prom, *window)
        reports += r
        syntax_errors += e
    return reports, syntax_errors


def print_live(args, version, reports, syntax_errors, unmatched, missing):
    for r in reports:
        mark = "data" if r["data"] else "NO DATA"
        req = " (required)" if r.get("required") else ""
        if not args.quiet or (r.get("required") and not r["data"]):
            print(f'{mark:8} {r["uid"]}/{r["title"]}{req}')
    for e in syntax_errors:
        print(f"query error: {e}")
    for s in unmatched:
        print(f"problem: --require-data {s!r} matches no panel")
    for r in missing:
        print(f'problem: required panel {r["uid"]}/{r["title"]} returned no data for testid {args.testid}')
    with_data = sum(1 for r in reports if r["data"])
    print(f"prometheus {version}: {sum(len(r['queries']) for r in reports)} queries run, "
          f"{len(syntax_errors)} errors; {with_data}/{len(reports)} panels with data; "
          f"required {sum(1 for r in reports if r.get('required'))}, missing data {len(missing)}")


def check(args):
    """The offline checks, then (with --prometheus) every query against the run: 0 when all pass."""
    dashboards, problems = read_dashboards(args.paths, load_fixture(args.fixture))
    print_conventions(dashboards, problems)

    required_sel = [s for item in args.require_data for s in item.split(",") if s]
    if not args.prometheus:
        if required_sel:
            raise UsageError("--require-data needs --prometheus")
        return 1 if problems else 0
    testids, start, end, step, rate_interval = query_window(args)

    prom = Prometheus(args.prometheus)
    version = prom.check_up()
    reports, syntax_errors = run_dashboards(dashboards, prom, (testids, start, end, step, rate_interval))
    unmatched = select_required(required_sel, reports)
    missing = [r for r in reports if r.get("required") and not r["data"]]
    print_live(args, version, reports, syntax_errors, unmatched, missing)
    if args.report:
        pathlib.Path(args.report).write_text(json.dumps(
            {"prometheus": args.prometheus, "testid": args.testid, "start": start, "end": end,
             "problems": problems, "query_errors": syntax_errors, "unmatched_selectors": unmatched,
             "panels": reports}, indent=2) + "\n")
    return 1 if (problems or syntax_errors or unmatched or missing) else 0


def main(argv=None):
    args = parse_args(argv)
    try:
        return check(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

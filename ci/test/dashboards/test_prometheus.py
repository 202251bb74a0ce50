"""Every query of every dashboard against a real Prometheus 2.42 holding real k6 data: the emit.js
run (errors, timeouts and dropped iterations provoked for real, churn telemetry simulated), the
real scenarios/static.js, the README picture, and the checker's failure paths."""
import json
import sys
import time

import pytest

from conftest import (CHECK, HERE, ROOT, Run, assert_panel_has_data, assert_report_consistent, k6_remote_write,
                      output_of, panel_ids, query_value, report_value, required_panels, run, summary_count,
                      wait_for_value)
from harness import pythonpath

import check  # the dashboard checker (ci/tools/dashboards): its variable substitution and client

K6_METRICS = json.loads((ROOT / "ci/tools/dashboards/fixtures/metrics.json").read_text())["sources"]["k6"]["metrics"]
EMIT_SELECTORS = ["@k6", "@routes", "@warmup", "@controller-restart", "@dataplane-scale", "@controller-upgrade", "@backend-failover",
                  "@long-lived"]
EMIT_PANELS = required_panels(EMIT_SELECTORS)
STATIC_SELECTORS = [
    "bench-run-overview/Request rate*", "bench-run-overview/Dropped iterations", "bench-run-overview/VUs*",
    "bench-run-overview/Latency*", "bench-run-overview/p99 latency by path", "bench-run-overview/Responses by HTTP status",
    "bench-run-overview/Errors*", "bench-run-overview/Error ratio", "bench-run-overview/Data sent and received",
    "bench-comparison/Results by run", "bench-comparison/Tail latency by run", "bench-comparison/Latency by percentile",
    "bench-comparison/Achieved request rate by run", "bench-comparison/Errors*", "bench-comparison/p99 by run",
    "bench-run-overview/annotation Warm-up"]
STATIC_PANELS = required_panels(STATIC_SELECTORS)


# ---- the emit.js run ----

def test_emit_run(emit_run):
    """emit.js has no threshold that can fail (its dropped iterations are the point): exit 0."""
    assert emit_run.rc == 0, f"testdata/emit.js ran with remote write: k6 exit {emit_run.rc}, want 0\n{emit_run.log()}"


@pytest.mark.parametrize("name", K6_METRICS)
def test_series_name(prometheus, emit_data, name):
    """Every k6 name in the fixture exists in Prometheus for this run: the fixture is what k6 writes."""
    assert query_value(prometheus.url, f'count({name}{{testid="{emit_data.testid}"}})') is not None, \
        f"remote write produced no {name} for testid {emit_data.testid}"


@pytest.fixture(scope="session")
def emit_checked(prometheus, emit_data):
    emit_data.check(prometheus, EMIT_SELECTORS, str(emit_data.start - 60), ["--end", "now"])
    return emit_data


@pytest.mark.parametrize("uid, title", EMIT_PANELS, ids=panel_ids(EMIT_PANELS))
def test_emit_panel_has_data(emit_checked, uid, title):
    assert_panel_has_data(emit_checked, uid, title)


def test_emit_queries_accepted(emit_checked):
    """Every query of every dashboard accepted by Prometheus; the checker's verdict agrees."""
    assert_report_consistent(emit_checked, EMIT_PANELS)
    assert sum(len(p["queries"]) for p in emit_checked.report["panels"]) > 0


@pytest.fixture(scope="session")
def emit_counts(emit_checked):
    export = emit_checked.dir / "summary.json"
    return {m: summary_count(export, m) for m in
            ("http_reqs{role:load}", "http_reqs{role:warmup}", "http_reqs", "bench_errors", "dropped_iterations")}


def assert_equal(got, want, what):
    """One count equal to k6's own; a zero want would prove nothing."""
    assert want > 0 and got == want, f"{what}: got {got}, want {want} (> 0)"


def test_churn_probe_requests(emit_counts):
    """The churn VU's probe requests are there to be left out: without them the next check proves less."""
    assert emit_counts["http_reqs"] > emit_counts["http_reqs{role:load}"], emit_counts


def test_warmup_requests_there_and_left_out(emit_checked, emit_counts):
    """The warm-up's requests (role=warmup) are in the data, their window marked (the Warm-up annotation has
    data), and not in the results table's requests, which equal k6's role=load count (next case)."""
    assert emit_counts["http_reqs{role:warmup}"] > 0, emit_counts
    assert emit_counts["http_reqs"] > emit_counts["http_reqs{role:load}"] + emit_counts["http_reqs{role:warmup}"], emit_counts
    assert_panel_has_data(emit_checked, "bench-run-overview", "annotation Warm-up")


def test_results_table_requests(emit_checked, emit_counts):
    """results table requests = k6 summary http_reqs{role:load}."""
    assert_equal(report_value(emit_checked.report, "bench-comparison", "Results by run", "F"),
                 emit_counts["http_reqs{role:load}"], "requests")


def test_results_table_errors(emit_checked, emit_counts):
    """results table errors (6 classes) = k6 summary bench_errors."""
    got = sum(report_value(emit_checked.report, "bench-comparison", "Results by run", ref) for ref in "GHIJKL")
    assert_equal(got, emit_counts["bench_errors"], "errors")


def test_overview_error_stat(emit_checked, emit_counts):
    """run overview error stat = k6 summary bench_errors."""
    assert_equal(report_value(emit_checked.report, "bench-run-overview", "Errors in range by class", "A"),
                 emit_counts["bench_errors"], "errors")


def test_results_table_dropped(emit_checked, emit_counts):
    """results table dropped = k6 summary dropped_iterations."""
    assert_equal(report_value(emit_checked.report, "bench-comparison", "Results by run", "M"),
                 emit_counts["dropped_iterations"], "dropped")


def test_timeouts_provoked(prometheus, emit_data):
    """The stall server's requests ended in client timeouts, for real."""
    got = query_value(prometheus.url, 'sum(max_over_time(k6_bench_errors_total'
                                      f'{{testid="{emit_data.testid}",class="timeout"}}[10m]))')
    assert got, f"no timeout errors in the run ({got})"


# ---- the real static scenario ----

@pytest.fixture(scope="session")
def static_run(prometheus, nginx, emit_data, work):
    """scenarios/static.js at 100 req/s with 50 connections for 10 s against nginx, after a 2 s warm-up."""
    d = work / "static"
    d.mkdir()
    testid, start = f"dash-static-{int(time.time())}", int(time.time())
    rc = k6_remote_write(prometheus, testid, ROOT / "scenarios/static.js", [],
                         {"BENCH_TARGET_URL": nginx.url, "BENCH_RATE": 100, "BENCH_DURATION": "10s",
                          "BENCH_CONNECTIONS": 50, "BENCH_WARMUP": "2s", "BENCH_TESTID": testid,
                          "BENCH_SUMMARY_DIR": d}, d / "k6.log")
    r = Run(testid, start, rc, d)
    summary = d / "summary.json"
    r.summary = json.loads(summary.read_text()) if summary.is_file() else None
    if rc not in (0, 99):  # 99: the threshold failed, the run and its summary are there
        return r
    wait_for_value(prometheus.url, f'sum(k6_http_reqs_total{{testid="{testid}", role="load"}})',
                   r.summary["requests"]["total"])
    r.check(prometheus, STATIC_SELECTORS, str(start - 30))
    # a checker whose verdict disagrees with its report fails every panel case of this run
    assert_report_consistent(r, STATIC_PANELS)
    return r


def test_static_run(static_run):
    """100 req/s with 50 connections against local nginx holds its rate: exit 0. 99 is the
    scenario's threshold (iterations dropped), a failed run; the panel cases still read its data."""
    dropped = static_run.summary["requests"]["dropped_iterations"] if static_run.summary else "?"
    assert static_run.rc == 0, (f"scenarios/static.js: k6 exit {static_run.rc}, want 0 ({dropped} dropped "
                                f"iterations)\n{static_run.log()}")


@pytest.fixture(scope="session")
def static_checked(static_run):
    if static_run.report is None:
        pytest.skip(f"scenarios/static.js exited {static_run.rc} (see test_static_run): nothing checked")
    return static_run


@pytest.mark.parametrize("uid, title", STATIC_PANELS, ids=panel_ids(STATIC_PANELS))
def test_static_panel_has_data(static_checked, uid, title):
    assert_panel_has_data(static_checked, uid, title)


def test_static_error_classes_at_zero(prometheus, static_checked):
    """A clean run still has a series per error class (started at 0 in setup): panels read 0, not "no data"."""
    sel = f'k6_bench_errors_total{{testid="{static_checked.testid}"}}'
    classes = query_value(prometheus.url, f"count(count by (class) ({sel}))")
    total = query_value(prometheus.url, f"sum({sel})")
    assert (classes, total) == (6, 0), f"error classes with a series: {classes} (want 6), their sum: {total} (want 0)"


def test_static_results_table_requests(static_checked):
    """static scenario: results table requests = summary.json requests.total (the warm-up's left out)."""
    assert_equal(report_value(static_checked.report, "bench-comparison", "Results by run", "F"),
                 static_checked.summary["requests"]["total"], "requests")


def test_static_warmup_series(prometheus, static_checked):
    """static scenario: its warm-up's requests are series of their own (scenario and role warmup), as many as
    summary.json says it left out."""
    sel = f'k6_http_reqs_total{{testid="{static_checked.testid}", scenario="warmup", role="warmup"}}'
    assert_equal(query_value(prometheus.url, f"sum(max_over_time({sel}[10m]))"),
                 static_checked.summary["requests"]["warmup_requests"], "warm-up requests")


# ---- the README picture ----

def test_render(prometheus, emit_data, work):
    """render.py draws run-overview from its queries: every panel draws (>= 15 lines, none empty)."""
    svg = work / "run-overview.svg"
    r = run([sys.executable, ROOT / "dashboards/generator/render.py", ROOT / "dashboards/run-overview.json",
             "--prometheus", prometheus.url, "--testid", emit_data.testid, "--start", emit_data.start - 10,
             "--end", "now", "--out", svg], env=pythonpath.env())
    assert r.returncode == 0, output_of(r)
    text = svg.read_text()
    lines, empty = text.count("<polyline"), text.count(">No data<")
    assert lines >= 15 and empty == 0, f"{lines} lines (want >= 15), {empty} empty panels"


# ---- the checker's failure paths ----

def check_fails(args, message):
    r = run([sys.executable, CHECK, "--quiet", *args], env=pythonpath.env())
    assert r.returncode != 0, f"check.py succeeded:\n{output_of(r)}"
    assert message in output_of(r), f"no {message!r} in:\n{output_of(r)}"


def test_fails_for_missing_run(prometheus, emit_data):
    """data check fails for a run that does not exist."""
    check_fails(["--prometheus", prometheus.url, "--testid", "no-such-run", "--start", emit_data.start - 60,
                 "--require-data", "@k6"], "returned no data for testid no-such-run")


def test_fails_on_query_syntax_error(prometheus, emit_data, tmp_path):
    """Prometheus rejects a query with a syntax error (unbalanced parentheses)."""
    d = json.loads((ROOT / "dashboards/run-overview.json").read_text())
    p = next(p for p in d["panels"] if p.get("targets"))
    p["targets"][0]["expr"] = p["targets"][0]["expr"].rstrip(")")
    (tmp_path / "run-overview.json").write_text(json.dumps(d))
    check_fails([tmp_path, "--prometheus", prometheus.url, "--testid", emit_data.testid],
                "query error: run-overview.json panel")


def test_fails_on_unmatched_selector(prometheus, emit_data):
    """a selector that matches no panel fails."""
    check_fails(["--prometheus", prometheus.url, "--testid", emit_data.testid,
                 "--require-data", "bench-run-overview/No such panel"], "matches no panel")


def test_names_unknown_preset(prometheus, emit_data):
    """an unknown preset is named, with the presets there are."""
    check_fails(["--prometheus", prometheus.url, "--testid", emit_data.testid, "--require-data", "@nginx"],
                "--require-data preset '@nginx' is unknown; presets: @k6, @warmup, @routes, @controller-restart, @dataplane-scale, "
                "@controller-upgrade, @backend-failover, @long-lived, @traefik, @cadvisor")


# ---- event attribution: the run overview's row against the same data ----

ATTRIBUTION_TITLE = "Errors within W of an event vs. no event nearby"


BREAKS_TITLE = "Stream breaks within W of an event vs. no event nearby"


def attribution_queries(testid, window, start, end, step=5, title=ATTRIBUTION_TITLE):
    """The row's two queries of panel `title` (A within W of an event, B no event within W) and all it
    counts per interval (the load's errors, or the stream breaks), with the dashboard's variables as
    the checker sets them (window overridden)."""
    dash = json.loads((ROOT / "dashboards/run-overview.json").read_text())
    values = check.substitutions(dash, [testid], start, end, step, 4 * step)
    values["window"] = window
    (panel,) = [p for p, _ in check.walk_panels(dash) if p.get("title") == title]
    near, none = (check.substitute(t["expr"], values) for t in panel["targets"])
    return near, none, near.split(" and on() ")[0]


def range_values(prom_url, expr, start, end, step=5):
    """{(t, the series' labels): value} of a range query."""
    r = check.Prometheus(prom_url).query(expr, start, end, step, instant=False)
    assert r.get("status") == "success", f"query {expr!r}: {r.get('error')}"
    return {(float(t), tuple(sorted(res["metric"].items()))): float(v)
            for res in r["data"]["result"] for t, v in res["values"]}


def test_attribution_row_splits_every_error(prometheus, emit_data):
    """At every step the errors within W of an event and those with no event within W add up to all the
    load's errors (one or the other, never both); emit.js scales every second or so, so with the default
    W most of its errors are near an event, and with W = 1 ms (shorter than any push interval) fewer."""
    assert_split_by_window(prometheus, emit_data, ATTRIBUTION_TITLE)


def test_breaks_row_splits_every_break(prometheus, emit_data):
    """The stream breaks' panel, likewise, per cause: emit.js breaks a stream of each kind in its first
    three scale steps, just after the scale event."""
    assert_split_by_window(prometheus, emit_data, BREAKS_TITLE)


def assert_split_by_window(prometheus, emit_data, title):
    start, end = emit_data.start - 10, int(time.time())
    near_by_window = {}
    for window in ("7s", "1ms"):
        near, none, every = attribution_queries(emit_data.testid, window, start, end, title=title)
        near_v, none_v, all_v = (range_values(prometheus.url, q, start, end) for q in (near, none, every))
        assert all_v and sum(all_v.values()) > 0, every
        for t, v in all_v.items():
            assert abs(near_v.get(t, 0) + none_v.get(t, 0) - v) < 1e-9, (t, near_v.get(t), none_v.get(t), v)
            assert not (t in near_v and t in none_v), t
        near_by_window[window] = sum(near_v.values())
    assert near_by_window["7s"] > near_by_window["1ms"], near_by_window


def test_report_attributes_the_same_errors(prometheus, emit_data):
    """benchreport.timeline on the same run: the errors go to its scale events or to none, all counted."""
    from benchreport.prometheus import Prometheus, query_step
    from benchreport.timeline import run_attribution
    prom = Prometheus(prometheus.url)
    first, last = prom.locate_run(emit_data.testid)
    a = run_attribution(prom, emit_data.testid, first, last, query_step(first, last))
    errors = query_value(prometheus.url, f'sum(max_over_time(k6_bench_errors_total{{testid="{emit_data.testid}", '
                                         f'role="load"}}[10m]))')
    assert a["events"]["scale"]["events"] > 0 and a["events"]["scale"]["errors_total"] > 0, a
    assert a["errors_total"] == errors == (sum(b["errors_total"] for b in a["events"].values())
                                           + a["unattributed"]["errors_total"]), (a, errors)
    # the stream breaks (per kind two resets and a backend_stop, each in a step with its scale event and
    # route changes), apart
    breaks = {c: query_value(prometheus.url, f'sum(max_over_time(k6_bench_streams_broken_total{{testid='
                                             f'"{emit_data.testid}", cause="{c}"}}[10m]))') for c in ("reset", "backend_stop")}
    assert breaks == {"reset": 6, "backend_stop": 3}, breaks
    buckets = list(a["events"].values()) + [a["unattributed"]]
    got = {c: sum(b["streams_broken"].get(c, 0) for b in buckets) for c in breaks}
    assert got == breaks and a["streams_broken_total"] == 9, a
    assert sum(b["streams_broken_total"] for b in a["events"].values()) > 0, a

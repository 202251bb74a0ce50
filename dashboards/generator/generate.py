#!/usr/bin/env python3
"""Writes the bench Grafana dashboards (dashboards/*.json) from one readable description.

The JSON files are the product (raw Grafana JSON, shipped by the chart as sidecar ConfigMaps);
this script is how they are written, so every panel follows the same conventions: datasource
variable `datasource`, `testid` variable, a unit on every panel, `$__rate_interval` in rates,
percentiles from native histograms merged across runners with `sum` before `histogram_quantile`.

Usage:
  generate.py            rewrite dashboards/*.json
  generate.py --check    exit 1 if a committed dashboard differs from what this script writes
"""
import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "dashboards"

DS = {"type": "prometheus", "uid": "${datasource}"}
# Every k6 selector is scoped to the selected run(s), without setup()/teardown() requests (a
# scenario's target probe in setup() is not part of the measured load; k6 tags it group="::setup").
RUN = 'testid=~"$testid", group!~"::(setup|teardown)"'
# Per-request k6 metrics count the load scenarios only (role="load"), as summary.json does: the churn
# VU's convergence probes (role="churn", about 50 req/s on fresh connections) are not measured load.
LOAD = RUN + ', role="load"'
REQUEST_METRICS = {"k6_http_reqs_total", "k6_http_req_duration_seconds", "k6_data_sent_total",
                   "k6_data_received_total"}


def selector(metric):
    return LOAD if metric in REQUEST_METRICS else RUN
# The percentiles the published results use, as (label, quantile), and the error classes: from
# scenarios/contract.json, their one statement.
CONTRACT = json.loads((ROOT / "scenarios" / "contract.json").read_text())
PERCENTILES = [(p["key"], p["quantile"]) for p in CONTRACT["percentiles"]["list"]]
ERROR_CLASSES = list(CONTRACT["errorClasses"]["causes"])


# ---------------------------------------------------------------------------------------------
# Query helpers (PromQL text only)

def k6_rate(metric, by="", labels=None):
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} (rate({metric}{{{labels or selector(metric)}}}[$__rate_interval]))"


def k6_quantile(q, metric="k6_http_req_duration_seconds", by="", window="$__rate_interval",
                labels=None):
    """Quantile of a k6 native histogram, merged across runners by summing the rates first."""
    grouping = f" by ({by})" if by else ""
    return (f"histogram_quantile({q}, sum{grouping} "
            f"(rate({metric}{{{labels or selector(metric)}}}[{window}])))")


def k6_total(metric, by, labels=None):
    """Whole-run total of a k6 counter: each runner pushes its cumulative value, so the last value
    per series (max of a counter that never resets) summed over runners is exact."""
    return f"sum by ({by}) (max_over_time({metric}{{{labels or selector(metric)}}}[$__range]))"


def k6_average_rate(by, labels=LOAD):
    """Average request rate of each run over its own duration, not over the dashboard range:
    (counter at its last push - at its first) / (time between them). Values and timestamps are read
    at the same 5 s subquery steps, so both belong to the same samples."""
    c = f"k6_http_reqs_total{{{labels}}}"
    span = (f"(max by ({by}) (max_over_time(timestamp({c})[$__range:5s])) - "
            f"min by ({by}) (min_over_time(timestamp({c})[$__range:5s])))")
    return f"sum by ({by}) (max_over_time({c}[$__range:5s]) - min_over_time({c}[$__range:5s])) / {span}"


def zero_while_running(expr, by=""):
    """`expr`, or 0 for every series of the run's request rate: a counter that k6 creates only on
    its first event (dropped iterations, errors) then reads 0 instead of "No data" while the run
    is live, and still "No data" when the run has no data at all."""
    grouping = f" by ({by})" if by else ""
    return f"({expr}) or on ({by}) (0 * sum{grouping} (rate(k6_http_reqs_total{{{LOAD}}}[$__rate_interval])))"


def zero_total(expr, by, label=None):
    """`expr` (a whole-range total of a counter k6 creates on its first event), or 0 for every run
    that has requests: a run without errors shows 0, not "No data". label: (name, value) given to
    the zero series when `expr` is grouped by one more label than `by` (e.g. class="none")."""
    zero = f"0 * sum by ({by}) (max_over_time(k6_http_reqs_total{{{LOAD}}}[$__range]))"
    if label:
        zero = labelled(zero, *label)
    return f"({expr}) or on ({by}) ({zero})"


def percentile_distribution(by="testid", labels=LOAD):
    """One series per percentile label, value = latency over the whole range: the published
    percentile chart (x = percentile on a log-like axis, y = latency)."""
    parts = []
    for label, q in PERCENTILES:
        inner = k6_quantile(q, by=by, window="$__range", labels=labels)
        parts.append(f'label_replace({inner}, "percentile", "{label}", "", "")')
    return " or ".join(parts)


def labelled(expr, label, value):
    return f'label_replace({expr}, "{label}", "{value}", "", "")'


# ---------------------------------------------------------------------------------------------
# Panel builders

def target(expr, legend, ref="A", instant=False, table=False):
    t = {"datasource": DS, "editorMode": "code", "expr": expr, "legendFormat": legend,
         "range": not instant, "instant": instant, "refId": ref}
    if table:
        t["format"] = "table"
    return t


def targets(*specs, instant=False, table=False):
    """specs: (expr, legend) pairs; refIds A, B, C... in order."""
    return [target(e, l, chr(ord("A") + i), instant, table) for i, (e, l) in enumerate(specs)]


def _base(kind, title, description, tgts, unit):
    return {"type": kind, "title": title, "description": description, "datasource": DS,
            "targets": tgts, "fieldConfig": {"defaults": {"unit": unit}, "overrides": []}}


def timeseries(title, description, tgts, unit, *, stack=False, bars=False, log=False,
               steps=False, minimum=None, axis_label="", right=None):
    """right: (legend, unit) of one series drawn on its own right-hand axis with its own unit."""
    p = _base("timeseries", title, description, tgts, unit)
    if right:
        name, right_unit = right
        p["fieldConfig"]["overrides"].append({
            "matcher": {"id": "byName", "options": name},
            "properties": [{"id": "unit", "value": right_unit},
                           {"id": "custom.axisPlacement", "value": "right"},
                           {"id": "custom.scaleDistribution", "value": {"type": "linear"}}]})
    custom = {"drawStyle": "bars" if bars else "line", "lineWidth": 1, "fillOpacity": 60 if bars else 10,
              "showPoints": "never", "spanNulls": False, "axisLabel": axis_label,
              "lineInterpolation": "stepAfter" if steps else "linear",
              "stacking": {"mode": "normal" if stack else "none", "group": "A"}}
    if log:
        custom["scaleDistribution"] = {"type": "log", "log": 10}
    p["fieldConfig"]["defaults"]["custom"] = custom
    if minimum is not None:
        p["fieldConfig"]["defaults"]["min"] = minimum
    p["options"] = {"legend": {"displayMode": "table", "placement": "right", "showLegend": True,
                               "calcs": ["lastNotNull", "max"]},
                    "tooltip": {"mode": "multi", "sort": "desc"}}
    return p


def stat(title, description, tgts, unit, *, text_mode="value_and_name", decimals=None):
    p = _base("stat", title, description, tgts, unit)
    if decimals is not None:
        p["fieldConfig"]["defaults"]["decimals"] = decimals
    p["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                    "textMode": text_mode, "colorMode": "value", "graphMode": "none",
                    "justifyMode": "auto", "orientation": "auto"}
    return p


def table(title, description, tgts, unit, renames, *, order=None, overrides=None):
    p = _base("table", title, description, tgts, unit)
    p["fieldConfig"]["overrides"] = overrides or []
    index = {name: i for i, name in enumerate(order or [])}
    p["transformations"] = [
        {"id": "merge", "options": {}},
        {"id": "organize", "options": {"excludeByName": {"Time": True}, "renameByName": renames,
                                       "indexByName": index}},
    ]
    p["options"] = {"showHeader": True, "cellHeight": "sm"}
    return p


def barchart(title, description, tgts, unit, transformations, *, log=False, stack=False, x_field=None):
    p = _base("barchart", title, description, tgts, unit)
    custom = {"fillOpacity": 80, "lineWidth": 1, "gradientMode": "none", "axisLabel": ""}
    if log:
        custom["scaleDistribution"] = {"type": "log", "log": 10}
    p["fieldConfig"]["defaults"]["custom"] = custom
    p["transformations"] = transformations
    p["options"] = {"orientation": "vertical", "stacking": "normal" if stack else "none",
                    "showValue": "auto", "groupWidth": 0.7, "barWidth": 0.9, "xTickLabelRotation": 0,
                    "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                    "tooltip": {"mode": "multi", "sort": "none"}}
    if x_field:
        p["options"]["xField"] = x_field
    return p


def distribution_panel(title, description, by="testid"):
    """Latency by percentile (log-like x axis: p50, p90, p99 ... p99.9999 evenly spaced)."""
    tgts = [target(percentile_distribution(by), "{{percentile}} {{" + by + "}}", instant=True,
                   table=True)]
    corner = f"percentile\\{by}"
    transformations = [
        {"id": "groupingToMatrix",
         "options": {"columnField": by, "rowField": "percentile", "valueField": "Value"}},
        {"id": "sortBy", "options": {"sort": [{"field": corner, "desc": False}]}},
    ]
    return barchart(title, description, tgts, "s", transformations, log=True, x_field=corner)


class Layout:
    """Places panels left to right on Grafana's 24-column grid and numbers them."""

    def __init__(self):
        self.panels, self.x, self.y, self.row_h, self.next_id = [], 0, 0, 0, 1
        self.open_row = None  # collapsed row collecting its own panels

    def _place(self, panel, w, h):
        if self.x + w > 24:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0
        panel["id"] = self.next_id
        self.next_id += 1
        panel["gridPos"] = {"h": h, "w": w, "x": self.x, "y": self.y}
        self.x += w
        self.row_h = max(self.row_h, h)

    def row(self, title, collapsed=False):
        self.newline()
        r = {"type": "row", "title": title, "collapsed": collapsed, "panels": []}
        self._place(r, 24, 1)
        self.newline()
        self.panels.append(r)
        self.open_row = r if collapsed else None

    def add(self, panel, w, h):
        self._place(panel, w, h)
        (self.open_row["panels"] if self.open_row else self.panels).append(panel)

    def newline(self):
        if self.x:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0


# ---------------------------------------------------------------------------------------------
# Variables and dashboard shell

# No `current` on the datasource and query variables: Grafana picks the default datasource and the
# first value (the schema's `current` needs a real text and value, which only a live Grafana knows).
def datasource_variable():
    return {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
            "hide": 0, "refresh": 1, "regex": "", "options": [], "includeAll": False, "multi": False}


def query_variable(name, label, query, *, multi=False, include_all=False, all_value=None):
    v = {"name": name, "label": label, "type": "query", "datasource": DS,
         "query": {"query": query, "refId": f"{name}-query", "qryType": 1},
         "refresh": 2, "sort": 1, "regex": "", "options": [], "hide": 0,
         "multi": multi, "includeAll": include_all}
    if all_value is not None:
        v["allValue"] = all_value
    return v


def textbox_variable(name, label, default, description):
    return {"name": name, "label": label, "type": "textbox", "query": default, "description": description,
            "current": {"text": default, "value": default}, "options": [], "hide": 0}


def testid_variable(multi):
    return query_variable("testid", "Run (testid)", "label_values(k6_http_reqs_total, testid)",
                          multi=multi, include_all=multi, all_value=".+" if multi else None)


def dashboard(uid, title, description, layout, variables, *, annotations=(), time_from="now-30m",
              refresh="10s", tags=("bench",)):
    builtin = {"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "enable": True,
               "hide": True, "iconColor": "rgba(0, 211, 255, 1)", "name": "Annotations & Alerts",
               "type": "dashboard"}
    return {
        "uid": uid, "title": title, "description": description, "tags": list(tags),
        # Provisioned from the chart's ConfigMaps: a change belongs in this generator, not in the UI
        # (grafana/dashboard-linter's uneditable-dashboard rule).
        "editable": False, "graphTooltip": 1, "schemaVersion": 39, "version": 1,
        "time": {"from": time_from, "to": "now"}, "refresh": refresh, "timezone": "browser",
        "fiscalYearStartMonth": 0, "liveNow": False, "weekStart": "",
        "timepicker": {}, "links": [
            {"title": "bench dashboards", "type": "dashboards", "tags": ["bench"], "asDropdown": True,
             "includeVars": True, "keepTime": True, "icon": "external link", "tooltip": "",
             "targetBlank": False}],
        "annotations": {"list": [builtin, *annotations]},
        "templating": {"list": variables},
        "panels": layout.panels,
    }


# ---------------------------------------------------------------------------------------------
# 1. Run overview

def run_overview():
    lay = Layout()
    reqs = k6_rate("k6_http_reqs_total")
    dropped = k6_rate("k6_dropped_iterations_total")

    lay.row("Load: was the offered rate held?")
    lay.add(timeseries(
        "Request rate: offered vs achieved",
        "Achieved = completed requests per second (all runners). Offered = achieved + dropped "
        "iterations: in the open model every iteration is one request, so what k6 could not start "
        "is the gap to the target rate.",
        targets((reqs, "achieved"), (f"{reqs} + ({zero_while_running(dropped)})", "offered")),
        "reqps", minimum=0), 12, 8)
    lay.add(timeseries(
        "Dropped iterations",
        "Iterations the constant-arrival-rate executor could not start (no free VU). Non-zero means "
        "the generator, not the target, limited the rate: raise connections or runners.",
        targets((zero_while_running(dropped), "dropped/s")), "reqps", bars=True, minimum=0), 6, 8)
    lay.add(timeseries(
        "VUs (connection budget in use)",
        "Active VUs summed over runners; with keep-alive each VU holds one connection.",
        targets(('sum(k6_vus{%s})' % RUN, "VUs")), "short", minimum=0), 6, 8)
    lag_p95 = f"max({k6_quantile('0.95', metric='k6_bench_runner_lag_seconds', by='instance_id')})"
    lay.add(timeseries(
        "Runner CPU-bound? Lag p95 (worst runner) and dropped iterations",
        "bench_runner_lag: how late a sleeping k6 VU woke up (scenario runner_lag, scenarios/lib/lag.js), "
        "p95 of the worst runner (instance_id). Above 10 ms (the summary also warns at p99 above 50 ms; "
        "limits calibrated in scenarios/calibrate/README.md) the runner was short of CPU and its latency "
        "includes its own queueing: "
        "give runners more CPU or add runners. Dropped iterations with a low lag mean the connection "
        "budget (VUs), not the CPU, was short.",
        targets((lag_p95, "runner lag p95"), (zero_while_running(dropped), "dropped/s")), "s",
        minimum=0, right=("dropped/s", "reqps")), 24, 6)
    lay.add(timeseries(
        "Runner pauses: scheduling p99 and GC CPU (worst runner, Go runtime)",
        "What the runner's Go runtime says of its own pauses since it started (k6/x/bench, "
        "scenarios/lib/lag.js): p99 of the time ready goroutines waited for a CPU (a response waits "
        "that long before k6 times it) and the garbage collector's share of the runner's CPU; the "
        "summary warns above the limits in scenarios/lib/lag.js. Runners hold the collector off with GOGC=off "
        "and a GOMEMLIMIT (chart loadtest.runner.gc).",
        targets(('max(k6_bench_runner_sched_p99_ms{%s}) / 1000' % RUN, "scheduling p99"),
                ('max(k6_bench_runner_gc_cpu_ratio{%s})' % RUN, "GC CPU share")), "s",
        minimum=0, right=("GC CPU share", "percentunit")), 24, 6)
    lay.add(timeseries(
        "Runner CPU quota: share of periods throttled (worst runner, cgroup)",
        "What the runner's own cgroup says (k6/x/bench reads cpu.stat, scenarios/lib/lag.js): the share "
        "of CFS quota periods since the load began in which the kernel stopped the runner because it "
        "had used its CPU limit (loadtest.runner.resources.limits.cpu). While stopped it neither sends "
        "nor times anything. The summary says CPU-THROTTLED above the limit in scenarios/lib/lag.js "
        "(THROTTLED_LIMIT); 0 without a CPU limit, no series where the cgroup cannot be read.",
        targets(('max(k6_bench_runner_cpu_throttled_ratio{%s})' % RUN, "throttled share")), "percentunit",
        minimum=0), 24, 6)

    lay.row("Latency: percentiles over time (native histograms, merged across runners)")
    lay.add(timeseries(
        "Latency percentiles",
        "histogram_quantile over the sum of all runners' native histograms (never an average of "
        "per-runner percentiles). Log scale: the tail is the story.",
        targets(*[(k6_quantile(q), label) for label, q in PERCENTILES[:1] + PERCENTILES[2:5]]),
        "s", log=True), 16, 10)
    lay.add(distribution_panel(
        "Latency by percentile (whole range)",
        "The published percentile chart for this run: latency at p50 ... p99.9999 over the "
        "dashboard time range; x is evenly spaced in 'number of nines', y is logarithmic."), 8, 10)
    lay.add(timeseries(
        "p99 latency by path",
        "p99 per `path` tag (the paths experiment compares ingress, ClusterIP, NodePort and pod IP).",
        targets((k6_quantile("0.99", by="path"), "{{path}}")), "s", log=True), 12, 8)
    lay.add(timeseries(
        "Responses by HTTP status",
        "Completed requests per second by status (0 = no response: connection error or timeout).",
        targets((k6_rate("k6_http_reqs_total", by="status"), "{{status}}")), "reqps", stack=True,
        minimum=0), 12, 8)

    lay.row("Errors: which class, when")
    errors = k6_rate("k6_bench_errors_total", by="class")
    lay.add(timeseries(
        "Errors by class",
        "bench_errors by class: connection (refused/reset before a response), timeout, read "
        "(broken mid-response), http_5xx, http_4xx, other. Stacked.",
        targets((zero_while_running(errors), "{{class}}")), "reqps", stack=True, bars=True,
        minimum=0), 12, 8)
    lay.add(timeseries(
        "Error ratio",
        "All error classes / completed requests.",
        targets((f"({zero_while_running(k6_rate('k6_bench_errors_total'))}) / {reqs}", "errors / requests")),
        "percentunit", minimum=0), 6, 8)
    lay.add(stat(
        "Errors in range by class",
        "Total per class over the dashboard range (last cumulative value per runner, summed).",
        targets((zero_total(k6_total("k6_bench_errors_total", "testid, class"), "testid", ("class", "none")),
                 "{{class}}"), instant=True), "short",
        decimals=0), 6, 8)
    lay.add(timeseries(
        "Errors by cause",
        "bench_errors by class and cause (scenarios/lib/errors.js): connection/refused, /reset (at "
        "connect), /tls_handshake (a handshake cut or refused), /dns; read/eof, /reset, /replayed (a "
        "request Go re-sent after its reused keep-alive connection died: wrk counts it as a read "
        "error, so does bench); timeout; http status. Stacked.",
        targets((zero_while_running(k6_rate("k6_bench_errors_total", by="class, cause")),
                 "{{class}}/{{cause}}")), "reqps", stack=True, bars=True, minimum=0), 24, 8)

    lay.row("Churn: backend replicas and how fast the path converged")
    lay.add(timeseries(
        "Backend replicas: desired vs ready",
        "What the churn scenario asked for (desired) and what the Deployment reported ready. The "
        "gap is the rollout; latency and errors above line up on the same time axis.",
        targets(('max(k6_bench_replicas_desired{%s})' % RUN, "desired"),
                ('max(k6_bench_replicas_ready{%s})' % RUN, "ready")),
        "short", steps=True, minimum=0), 12, 8)
    lay.add(timeseries(
        "Scale events",
        "Actions taken by the churn scenario (scale, rollout, podkill) per rate interval.",
        targets(("sum by (action) (increase(k6_bench_scale_events_total{%s}[$__rate_interval]))" % RUN,
                 "{{action}}")), "short", bars=True, minimum=0), 12, 8)
    conv = "k6_bench_endpoint_convergence_seconds"
    lay.add(timeseries(
        "Endpoint convergence (mean per interval)",
        "Time from a pod becoming ready (added) or being removed until the path under test reflects "
        "it, by event; mean of the events in each rate interval.",
        targets((f"histogram_sum(sum by (event) (rate({conv}{{{RUN}}}[$__rate_interval]))) / "
                 f"histogram_count(sum by (event) (rate({conv}{{{RUN}}}[$__rate_interval])))", "{{event}}")),
        "s", minimum=0), 12, 8)
    lay.add(table(
        "Endpoint convergence over range",
        "Count, p50 and max-ish (p99) convergence per event over the dashboard range.",
        targets((f"histogram_count(sum by (event) (increase({conv}{{{RUN}}}[$__range])))", ""),
                (k6_quantile("0.5", conv, by="event", window="$__range"), ""),
                (k6_quantile("0.99", conv, by="event", window="$__range"), ""),
                instant=True, table=True),
        "s", {"Value #A": "events", "Value #B": "p50", "Value #C": "p99"},
        order=["event", "events", "p50", "p99"],
        overrides=[{"matcher": {"id": "byName", "options": "events"},
                    "properties": [{"id": "unit", "value": "short"}, {"id": "decimals", "value": 0}]}]),
        12, 8)

    lay.row("Routes: propagation, changes, scale (route-* experiments)")
    prop = "k6_bench_route_propagation_seconds"
    lay.add(table(
        "Route propagation over range: create -> first 200",
        "Per route kind (httproute, ingress: the migration A/B side by side): how many routes served "
        "and the time from each route's create call to its first 200 through the data plane "
        "(scenarios/lib/routes.js, probed every 20 ms), over the dashboard range.",
        targets((f"histogram_count(sum by (kind) (increase({prop}{{{RUN}}}[$__range])))", ""),
                (k6_quantile("0.5", prop, by="kind", window="$__range"), ""),
                (k6_quantile("0.9", prop, by="kind", window="$__range"), ""),
                (k6_quantile("0.99", prop, by="kind", window="$__range"), ""),
                instant=True, table=True),
        "s", {"Value #A": "routes", "Value #B": "p50", "Value #C": "p90", "Value #D": "p99"},
        order=["kind", "routes", "p50", "p90", "p99"],
        overrides=[{"matcher": {"id": "byName", "options": "routes"},
                    "properties": [{"id": "unit", "value": "short"}, {"id": "decimals", "value": 0}]}]),
        12, 8)
    lay.add(timeseries(
        "Route probe answers before the first 200",
        "What the data plane answered a new route's probes before its first 200, by kind and status "
        "bucket (404: no route yet, 503: route without a ready backend, no_response: connection "
        "failed). Stacked.",
        targets(("sum by (kind, status) (increase(k6_bench_route_pre_ready_total{%s}[$__rate_interval]))" % RUN,
                 "{{kind}} {{status}}")), "short", stack=True, bars=True, minimum=0), 12, 8)
    lay.add(timeseries(
        "Routes created and serving",
        "route-scale: routes created (all runners) and routes that served a 200 so far, by kind; the "
        "gap closing is the controller taking the new routes.",
        targets(("max by (kind) (k6_bench_routes_serving{%s})" % RUN, "{{kind}} serving"),
                (k6_total("k6_bench_routes_created_total", "kind"), "{{kind}} created")),
        "short", steps=True, minimum=0), 12, 8)
    lay.add(timeseries(
        "Route changes and non-2xx answers",
        "route-change: route updates made, and load answers that were not 2xx (any non-2xx fails "
        "route-change), per rate interval by kind.",
        targets(("sum by (kind) (increase(k6_bench_route_changes_total{%s}[$__rate_interval]))" % RUN,
                 "{{kind}} changes"),
                ("sum by (kind) (increase(k6_bench_route_errors_total{%s}[$__rate_interval]))" % RUN,
                 "{{kind}} non-2xx")), "short", bars=True, minimum=0), 12, 8)

    lay.row("Traffic")
    lay.add(timeseries(
        "Data sent and received",
        "Bytes per second on the wire as k6 counts them (all runners).",
        targets((k6_rate("k6_data_sent_total"), "sent"), (k6_rate("k6_data_received_total"), "received")),
        "Bps", minimum=0), 24, 7)

    # The query in `target` (expr, interval), the display keys beside it: where Grafana's Prometheus
    # datasource reads them (it moves a top-level expr/step there itself, for old dashboards).
    scale_annotation = {
        "datasource": DS, "enable": True, "iconColor": "orange", "name": "Scale events",
        "target": {"refId": "Anno", "interval": "10s",
                   "expr": "sum by (action) (increase(k6_bench_scale_events_total{%s}[$__rate_interval])) > 0" % RUN},
        "titleFormat": "{{action}}", "textFormat": "churn: {{action}}",
        "tagKeys": "action", "useValueForTime": False}
    return dashboard(
        "bench-run-overview", "bench / run overview",
        "One benchmark run live: offered vs achieved rate, latency percentiles to p99.9999, error "
        "classes, backend replicas and endpoint convergence on one time axis.",
        lay, [datasource_variable(), testid_variable(multi=False)], annotations=[scale_annotation])


# ---------------------------------------------------------------------------------------------
# 2. Controller view

def sum_rate(metric, by="", matchers=""):
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} (rate({metric}{{{matchers}}}[$__rate_interval]))"


def sum_increase(metric, by="", matchers=""):
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} (increase({metric}{{{matchers}}}[$__rate_interval]))"


def classic_quantile(q, metric, by="le", matchers="", scale=""):
    return f"histogram_quantile({q}, sum by ({by}) (rate({metric}_bucket{{{matchers}}}[$__rate_interval]))){scale}"


# Presence probes: one cheap series per controller whose metrics are scraped.
CONTROLLER_PROBES = [
    ("traefik", "traefik_config_reloads_total"),
    ("ingress-nginx", "nginx_ingress_controller_success"),
    ("nginx-ingress (F5 NGINX)", "nginx_ingress_controller_nginx_reloads_total"),
    ("haproxy (haproxytech)", "haproxy_reloads_total"),
    ("envoy-gateway", "xds_snapshot_update_total"),
    ("nginx-gateway-fabric", "nginx_gateway_fabric_event_batch_processing_milliseconds_count"),
    ("istio", "pilot_xds_pushes"),
]


def container_resources(title, containers):
    """CPU and memory of one plane of a Gateway API controller by container name (cAdvisor): each
    controller fixes these names (its chart, or the Deployment it creates per Gateway)."""
    sel = f'namespace=~"$controller_namespace", container=~"{containers}"'
    return timeseries(
        f"{title}: CPU and memory (cAdvisor)",
        f"CPU cores and working-set bytes of all containers named {containers} in the selected "
        "namespaces (memory on the right axis).",
        targets((f"sum(rate(container_cpu_usage_seconds_total{{{sel}}}[$__rate_interval]))", "cores"),
                (f"sum(container_memory_working_set_bytes{{{sel}}})", "memory")),
        "short", minimum=0, axis_label="cores", right=("memory", "bytes"))


# One collapsed row per controller: (row title, [time series panels, each 8 x 8]).
TRAEFIK_ROW = ("Traefik (traefik_*)", [
    timeseries(
        "Traefik: configuration reloads",
        "Dynamic configuration reloads per interval (Traefik applies endpoint changes through a "
        "reload of its dynamic configuration).",
        targets((sum_increase("traefik_config_reloads_total"), "reloads")), "short", bars=True,
        minimum=0),
    timeseries(
        "Traefik: time since last successful reload",
        "Seconds since traefik_config_last_reload_success (Traefik v3 has no reload-failure counter).",
        targets(("time() - max(traefik_config_last_reload_success)", "since last reload")), "s",
        minimum=0),
    timeseries(
        "Traefik: open connections",
        "Open connections by entrypoint and protocol.",
        targets(("sum by (entrypoint, protocol) (traefik_open_connections)", "{{entrypoint}} {{protocol}}")),
        "short", minimum=0),
    timeseries(
        "Traefik: requests by status (entrypoints)",
        "Requests per second as Traefik sees them, by status code.",
        targets((sum_rate("traefik_entrypoint_requests_total", "code"), "{{code}}")), "reqps",
        stack=True, minimum=0),
    timeseries(
        "Traefik: latency (entrypoint histogram)",
        "p50/p99 from Traefik's classic histogram. Its buckets bound the precision: with the "
        "defaults (0.1, 0.3, 1.2, 5 s) every request under 100 ms lands in the first bucket and the "
        "quantile reads as a fraction of 100 ms. Set metrics.prometheus.buckets (e.g. 0.001 ... 5) "
        "for benchmarks; k6's native histogram above has no such limit.",
        targets((classic_quantile("0.5", "traefik_entrypoint_request_duration_seconds"), "p50"),
                (classic_quantile("0.99", "traefik_entrypoint_request_duration_seconds"), "p99")),
        "s", log=True),
    timeseries(
        "Traefik: upstream errors (service 4xx/5xx)",
        "Responses with 4xx/5xx per backend service (502/503/504 = upstream unreachable or gone).",
        targets((sum_rate("traefik_service_requests_total", "service, code", 'code=~"[45].."'),
                 "{{code}} {{service}}")), "reqps", stack=True, minimum=0),
])


INGRESS_NGINX_ROW = ("ingress-nginx (nginx_ingress_controller_*)", [
    timeseries(
        "ingress-nginx: reloads",
        "Successful reload operations per interval. ingress-nginx updates endpoints through Lua "
        "without a reload, so churn should not reload here.",
        targets((sum_increase("nginx_ingress_controller_success"), "reloads")), "short", bars=True,
        minimum=0),
    timeseries(
        "ingress-nginx: last reload successful",
        "1 = the last configuration reload succeeded.",
        targets(("min(nginx_ingress_controller_config_last_reload_successful)", "last reload ok")),
        "bool", steps=True),
    timeseries(
        "ingress-nginx: requests by status",
        "Requests per second by status as the controller logged them.",
        targets((sum_rate("nginx_ingress_controller_requests", "status"), "{{status}}")), "reqps",
        stack=True, minimum=0),
    timeseries(
        "ingress-nginx: latency (request and upstream)",
        "p99 of request time (client side of nginx) and upstream response time, seconds.",
        targets((classic_quantile("0.99", "nginx_ingress_controller_request_duration_seconds"), "request p99"),
                (classic_quantile("0.99", "nginx_ingress_controller_response_duration_seconds"), "upstream p99")),
        "s", log=True),
    timeseries(
        "ingress-nginx: upstream errors (4xx/5xx)",
        "Responses with 4xx/5xx by status (502/503/504 = upstream unreachable or gone).",
        targets((sum_rate("nginx_ingress_controller_requests", "status", 'status=~"[45].."'), "{{status}}")),
        "reqps", stack=True, minimum=0),
    timeseries(
        "ingress-nginx: nginx process CPU and memory",
        "nginx worker processes as the controller measures them.",
        targets((sum_rate("nginx_ingress_controller_nginx_process_cpu_seconds_total"), "cpu (cores)"),
                ("sum(nginx_ingress_controller_nginx_process_resident_memory_bytes)", "rss")),
        "short", minimum=0, axis_label="cores", right=("rss", "bytes")),
])


F5_ROW = ("NGINX Inc / F5 nginx-ingress (nginx_ingress_controller_nginx_*, nginx_ingress_nginx_*)", [
    timeseries(
        "nginx-ingress: reloads by reason",
        "Successful reloads by reason: endpoints (a backend pod came or went) or other.",
        targets((sum_increase("nginx_ingress_controller_nginx_reloads_total", "reason"), "{{reason}}"),
                (sum_increase("nginx_ingress_controller_nginx_reload_errors_total"), "errors")),
        "short", bars=True, stack=True, minimum=0),
    timeseries(
        "nginx-ingress: last reload status and duration",
        "Last reload status (1 = ok) and duration (reported in milliseconds, shown in seconds).",
        targets(("min(nginx_ingress_controller_nginx_last_reload_status)", "status (1 = ok)"),
                ("max(nginx_ingress_controller_nginx_last_reload_milliseconds) / 1000", "duration")),
        "bool", steps=True, minimum=0, right=("duration", "s")),
    timeseries(
        "nginx-ingress: worker processes by generation",
        "Old-generation workers still draining after a reload hold connections and memory.",
        targets(("sum by (generation) (nginx_ingress_controller_nginx_worker_processes_total)", "{{generation}}")),
        "short", stack=True, minimum=0),
    timeseries(
        "nginx-ingress: requests and connections",
        "Requests per second and active connections (NGINX stub_status through the exporter).",
        targets((sum_rate("nginx_ingress_nginx_http_requests_total"), "requests/s"),
                ("sum(nginx_ingress_nginx_connections_active)", "active connections")),
        "reqps", minimum=0, right=("active connections", "short")),
    timeseries(
        "nginx-ingress: upstream latency",
        "p50/p99 of upstream response time (-enable-latency-metrics; reported in ms, shown in s).",
        targets((classic_quantile("0.5", "nginx_ingress_controller_upstream_server_response_latency_ms",
                                  scale=" / 1000"), "p50"),
                (classic_quantile("0.99", "nginx_ingress_controller_upstream_server_response_latency_ms",
                                  scale=" / 1000"), "p99")),
        "s", log=True),
    timeseries(
        "nginx-ingress: upstream errors (NGINX Plus)",
        "Upstream responses with 4xx/5xx by upstream (NGINX Plus API metrics only).",
        targets((sum_rate("nginx_ingress_nginxplus_upstream_server_responses", "upstream, code",
                          'code=~"[45]xx"'), "{{code}} {{upstream}}")),
        "reqps", stack=True, minimum=0),
])


HAPROXY_ROW = ("HAProxy Kubernetes Ingress, haproxytech (haproxy_*)", [
    timeseries(
        "haproxy: reloads and restarts",
        "HAProxy reloads and restarts by result; endpoint changes normally go through the runtime "
        "API without either.",
        targets((sum_increase("haproxy_reloads_total", "result"), "reload {{result}}"),
                (sum_increase("haproxy_restarts_total", "result"), "restart {{result}}"),
                (sum_increase("haproxy_runtime_socket_connections_total", "object"), "runtime API {{object}}")),
        "short", bars=True, minimum=0),
    timeseries(
        "haproxy: configuration in sync",
        "1 = a pending configuration is invalid and cannot be applied.",
        targets(("max(haproxy_unable_to_sync_configuration)", "unable to sync")), "bool", steps=True),
    timeseries(
        "haproxy: active servers per backend",
        "Backend servers HAProxy considers active: the endpoints as the controller sees them.",
        targets(("sum by (proxy) (haproxy_backend_active_servers)", "{{proxy}}")), "short", steps=True,
        minimum=0),
    timeseries(
        "haproxy: responses by status class",
        "Frontend HTTP responses per second by class (HAProxy labels codes 1xx..5xx, other).",
        targets((sum_rate("haproxy_frontend_http_responses_total", "code"), "{{code}}")), "reqps",
        stack=True, minimum=0),
    timeseries(
        "haproxy: backend response time",
        "HAProxy exports averages over the last 1024 requests and maxima, not histograms.",
        targets(("max(haproxy_backend_response_time_average_seconds)", "avg (last 1024)"),
                ("max(haproxy_backend_max_response_time_seconds)", "max")),
        "s", log=True),
    timeseries(
        "haproxy: upstream errors",
        "Backend 4xx/5xx responses, connection errors, response errors and retries per second.",
        targets((sum_rate("haproxy_backend_http_responses_total", "code", 'code=~"[45]xx"'), "{{code}}"),
                (sum_rate("haproxy_backend_connection_errors_total"), "connection errors"),
                (sum_rate("haproxy_backend_response_errors_total"), "response errors"),
                (sum_rate("haproxy_backend_retry_warnings_total"), "retries")),
        "reqps", stack=True, minimum=0),
])


# Gateway API controllers: each row has the control plane (configuration sent to the proxies, its
# CPU and memory) and the data plane (requests, upstream latency, its CPU and memory). Metric names
# were read in each controller's source at the pinned version (ci/test/dashboards/fixtures/metrics.json).
ENVOY_GATEWAY_ROW = ("Envoy Gateway: control plane (xds_*, watchable_*) and Envoy data plane (envoy_*)", [
    timeseries(
        "Envoy Gateway: xDS snapshot updates",
        "Control plane: xDS snapshots pushed to the Envoy fleet per interval (every route or "
        "endpoint change ends in one), and Kubernetes resources it applied for the fleet.",
        targets((sum_increase("xds_snapshot_update_total"), "xDS snapshot updates"),
                (sum_increase("resource_apply_total"), "resources applied")), "short", bars=True, minimum=0),
    timeseries(
        "Envoy Gateway: update handling time (p99 by runner)",
        "Control plane: p99 time a watchable subscriber (provider, gateway-api translator, xds "
        "translator, infrastructure) took to handle an update, by runner.",
        targets((classic_quantile("0.99", "watchable_subscribe_duration_seconds", by="le, runner"), "{{runner}}")),
        "s", log=True),
    container_resources("Envoy Gateway: control plane", "envoy-gateway"),
    timeseries(
        "Envoy: upstream responses by status class",
        "Data plane: responses from the backend clusters per second by class (2xx ... 5xx).",
        targets((sum_rate("envoy_cluster_upstream_rq_xx", "envoy_response_code_class"), "{{envoy_response_code_class}}xx")),
        "reqps", stack=True, minimum=0),
    timeseries(
        "Envoy: upstream latency and healthy endpoints",
        "Data plane: p50/p99 upstream request time (Envoy's classic histogram in milliseconds, shown "
        "in seconds) and the endpoints Envoy holds healthy (right axis): the backend as the data "
        "plane sees it.",
        targets((classic_quantile("0.5", "envoy_cluster_upstream_rq_time", scale=" / 1000"), "p50"),
                (classic_quantile("0.99", "envoy_cluster_upstream_rq_time", scale=" / 1000"), "p99"),
                ("sum(envoy_cluster_membership_healthy)", "healthy endpoints")),
        "s", log=True, right=("healthy endpoints", "short")),
    container_resources("Envoy Gateway: data plane", "envoy"),
])

NGF_ROW = ("NGINX Gateway Fabric: control plane (nginx_gateway_fabric_*) and NGINX data plane (nginx_http_*)", [
    timeseries(
        "NGINX Gateway Fabric: configuration batches",
        "Control plane: event batches processed per interval (each turns route and endpoint changes "
        "into NGINX configuration for the data plane's agent).",
        targets((sum_increase("nginx_gateway_fabric_event_batch_processing_milliseconds_count"), "batches")),
        "short", bars=True, minimum=0),
    timeseries(
        "NGINX Gateway Fabric: batch processing time",
        "Control plane: p50/p99 of event batch processing. Its buckets are 500 ms, 1, 5, 10 and 30 s, "
        "so every fast batch reads as a fraction of 500 ms.",
        targets((classic_quantile("0.5", "nginx_gateway_fabric_event_batch_processing_milliseconds", scale=" / 1000"), "p50"),
                (classic_quantile("0.99", "nginx_gateway_fabric_event_batch_processing_milliseconds", scale=" / 1000"), "p99")),
        "s", log=True),
    container_resources("NGINX Gateway Fabric: control plane", "nginx-gateway"),
    timeseries(
        "NGINX: client requests",
        "Data plane: client requests per second (the NGINX agent's nginx receiver, from stub_status).",
        targets((sum_rate("nginx_http_requests_total"), "requests/s")), "reqps", minimum=0),
    timeseries(
        "NGINX: connections by outcome",
        "Data plane: client connections accepted, handled and dropped per second.",
        targets((sum_rate("nginx_http_connections_total", "nginx_connections_outcome"), "{{nginx_connections_outcome}}")),
        "short", minimum=0),
    container_resources("NGINX Gateway Fabric: data plane", "nginx"),
])

ISTIO_ROW = ("Istio: control plane (pilot_*) and gateway Envoy data plane (istio_*)", [
    timeseries(
        "istiod: xDS pushes by type",
        "Control plane: configuration pushes to the gateway's Envoy per interval, by xDS type "
        "(cds, eds, lds, rds; *_senderr: failed sends).",
        targets((sum_increase("pilot_xds_pushes", "type"), "{{type}}")), "short", bars=True, minimum=0),
    timeseries(
        "istiod: proxy convergence time",
        "Control plane: p50/p99 delay from a configuration change to the proxy holding it.",
        targets((classic_quantile("0.5", "pilot_proxy_convergence_time"), "p50"),
                (classic_quantile("0.99", "pilot_proxy_convergence_time"), "p99")),
        "s", log=True),
    container_resources("istiod: control plane", "discovery"),
    timeseries(
        "Istio gateway: requests by response code",
        "Data plane: requests per second through the gateway's Envoy, by response code.",
        targets((sum_rate("istio_requests_total", "response_code"), "{{response_code}}")), "reqps",
        stack=True, minimum=0),
    timeseries(
        "Istio gateway: request duration",
        "Data plane: p50/p99 of istio_request_duration_milliseconds (classic histogram, shown in seconds).",
        targets((classic_quantile("0.5", "istio_request_duration_milliseconds", scale=" / 1000"), "p50"),
                (classic_quantile("0.99", "istio_request_duration_milliseconds", scale=" / 1000"), "p99")),
        "s", log=True),
    container_resources("Istio gateway: data plane", "istio-proxy"),
])


CONTROLLER_ROWS = [TRAEFIK_ROW, INGRESS_NGINX_ROW, F5_ROW, HAPROXY_ROW, ENVOY_GATEWAY_ROW, NGF_ROW, ISTIO_ROW]


def controllers():
    lay = Layout()
    pods = 'namespace=~"$controller_namespace", pod=~"$controller_pod", container!="", container!="POD"'
    lay.row("Which controller, and the run on the same axis")
    probe = " or ".join(labelled(f"count({metric})", "controller", name) for name, metric in CONTROLLER_PROBES)
    lay.add(stat(
        "Controllers with metrics",
        "Series count per controller whose metrics this Prometheus scrapes: open that controller's "
        "row below (Grafana cannot hide a row by data, so the rows start collapsed).",
        targets((probe, "{{controller}}"), instant=True), "short", decimals=0), 6, 7)
    lay.add(timeseries(
        "Run: request rate and errors (k6)",
        "The selected run as k6 saw it, for lining up with the controller's view.",
        targets((k6_rate("k6_http_reqs_total"), "requests/s"),
                (zero_while_running(k6_rate("k6_bench_errors_total")), "errors/s")),
        "reqps", minimum=0), 9, 7)
    lay.add(timeseries(
        "Run: p99 latency (k6) and ready backends",
        "p99 from k6's native histogram; ready replicas on the right axis.",
        targets((k6_quantile("0.99"), "p99"), ('max(k6_bench_replicas_ready{%s})' % RUN, "ready replicas")),
        "s", log=True, right=("ready replicas", "short")), 9, 7)
    lay.add(timeseries(
        "Controller CPU (cAdvisor)",
        "CPU cores used by the controller pods (container_cpu_usage_seconds_total from the kubelet's "
        "cAdvisor; pods chosen by the namespace and pod-regex variables).",
        targets((f"sum by (pod) (rate(container_cpu_usage_seconds_total{{{pods}}}[$__rate_interval]))", "{{pod}}")),
        "short", minimum=0, axis_label="cores"), 9, 7)
    lay.add(timeseries(
        "Controller memory (cAdvisor working set)",
        "Working-set bytes of the controller pods (what the OOM killer looks at).",
        targets((f"sum by (pod) (container_memory_working_set_bytes{{{pods}}})", "{{pod}}")),
        "bytes", minimum=0), 9, 7)
    lay.add(stat(
        "Controller CPU-seconds per 1,000 requests (cAdvisor)",
        "The controller pods' CPU-seconds over the time range divided by the selected run's requests, "
        "times 1,000: its cost per request (make results writes the same per run, summary "
        "controller_cost). Choose a time range that covers the run alone.",
        targets((f"1000 * sum(increase(container_cpu_usage_seconds_total{{{pods}}}[$__range])) "
                 f"/ sum(increase(k6_http_reqs_total{{{LOAD}}}[$__range]))", "CPU-s per 1k requests"),
                instant=True), "s", decimals=3), 6, 7)
    for title, panels in CONTROLLER_ROWS:
        lay.row(title, collapsed=True)
        for p in panels:
            lay.add(p, 8, 8)
    variables = [
        datasource_variable(), testid_variable(multi=False),
        query_variable("controller_namespace", "Controller namespace",
                       "label_values(container_cpu_usage_seconds_total, namespace)",
                       multi=True, include_all=True, all_value=".*"),
        textbox_variable("controller_pod", "Controller pod regex", CONTRACT["controllerPods"]["podRegex"],
                         "Regex on the pod name of the controller pods (cAdvisor panels)."),
    ]
    return dashboard(
        "bench-controllers", "bench / controller view",
        "What the ingress or Gateway API controller was doing during a run: reloads and configuration "
        "pushes, requests, "
        "latency and upstream errors as the controller sees them, CPU and memory.",
        lay, variables)


# ---------------------------------------------------------------------------------------------
# 3. Comparison

def comparison():
    lay = Layout()
    # experiment = the entry script (dynamic, paths, ...); scenario = k6's part of it (load, or
    # ingress_4k ... in paths): one row per measured part.
    by = "testid, controller, experiment, scenario"
    lay.row("Results table: the published comparison, live")
    quantile_cols = [("p50", "0.5"), ("p99", "0.99"), ("p99.9", "0.999"), ("p99.9999", "0.999999")]
    specs = [(k6_quantile(q, by=by, window="$__range"), "") for _, q in quantile_cols]
    specs.append((k6_average_rate(by), ""))
    specs.append((k6_total("k6_http_reqs_total", by), ""))
    for cls in ERROR_CLASSES:
        specs.append((zero_total(k6_total("k6_bench_errors_total", by, f'{RUN}, class="{cls}"'), by), ""))
    # Dropped iterations last: what the generator could not send (the open model's honesty column).
    specs.append((zero_total(k6_total("k6_dropped_iterations_total", by), by), ""))
    names = [c for c, _ in quantile_cols] + ["rate (avg)", "requests"] + ERROR_CLASSES + ["dropped"]
    renames = {f"Value #{chr(ord('A') + i)}": n for i, n in enumerate(names)}
    count_cols = ["requests"] + ERROR_CLASSES + ["dropped"]
    overrides = [{"matcher": {"id": "byName", "options": n},
                  "properties": [{"id": "unit", "value": "short"}, {"id": "decimals", "value": 0}]}
                 for n in count_cols]
    overrides.append({"matcher": {"id": "byName", "options": "rate (avg)"},
                      "properties": [{"id": "unit", "value": "reqps"}]})
    lay.add(table(
        "Results by run",
        "One row per run part (testid x controller x experiment x k6 scenario) over the dashboard "
        "time range: latency "
        "percentiles from the merged native histogram, average achieved rate, total requests, "
        "errors per class and dropped iterations (requests the generator could not send). Set the "
        "time range to cover the runs.",
        targets(*specs, instant=True, table=True), "s", renames,
        order=["testid", "controller", "experiment", "scenario", *names], overrides=overrides), 24, 9)

    lay.row("Bars")
    tail = [("p99", "0.99"), ("p99.9", "0.999"), ("p99.9999", "0.999999")]
    lay.add(barchart(
        "Tail latency by run",
        "p99, p99.9 and p99.9999 per run (log scale).",
        targets(*[(k6_quantile(q, by="testid", window="$__range"), "") for _, q in tail],
                instant=True, table=True),
        "s",
        [{"id": "merge", "options": {}},
         {"id": "organize", "options": {"excludeByName": {"Time": True},
                                        "renameByName": {f"Value #{chr(ord('A') + i)}": n
                                                         for i, (n, _) in enumerate(tail)}}}],
        log=True, x_field="testid"), 12, 9)
    lay.add(barchart(
        "Errors by class and run",
        "Total errors per class per run, stacked.",
        targets((zero_total(k6_total("k6_bench_errors_total", "testid, class"), "testid", ("class", "none")), ""),
                instant=True, table=True),
        "short",
        [{"id": "groupingToMatrix", "options": {"columnField": "class", "rowField": "testid",
                                                "valueField": "Value"}}],
        stack=True, x_field="testid\\class"), 12, 9)
    lay.add(barchart(
        "Achieved request rate by run",
        "Average achieved request rate of each run over its own duration (all runners).",
        targets((k6_average_rate("testid"), ""),
                instant=True, table=True),
        "reqps", [{"id": "organize", "options": {"excludeByName": {"Time": True},
                                                 "renameByName": {"Value": "achieved rate"}}}],
        x_field="testid"), 12, 9)
    lay.add(distribution_panel(
        "Latency by percentile",
        "The published percentile chart, live: one series per run, x = p50 ... p99.9999 evenly "
        "spaced in 'number of nines', y = latency (log)."), 12, 9)

    lay.row("Over time, run against run")
    lay.add(timeseries(
        "p99 by run",
        "p99 over time per run; runs at different times appear side by side on the time axis.",
        targets((k6_quantile("0.99", by="testid"), "{{testid}}")), "s", log=True), 12, 8)
    lay.add(timeseries(
        "Errors by run",
        "All error classes per second per run.",
        targets((zero_while_running(k6_rate("k6_bench_errors_total", by="testid"), by="testid"), "{{testid}}")),
        "reqps", minimum=0), 12, 8)
    return dashboard(
        "bench-comparison", "bench / comparison",
        "Several runs side by side (controller x experiment): the results table with p99, p99.9, "
        "p99.9999, error classes and achieved rate, bars, and the percentile-distribution chart.",
        lay, [datasource_variable(), testid_variable(multi=True)], time_from="now-6h", refresh="30s")


DASHBOARDS = {"run-overview.json": run_overview, "controllers.json": controllers,
              "comparison.json": comparison}


def render(build):
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail if dashboards/*.json are not up to date")
    ap.add_argument("--out", type=pathlib.Path, default=OUT_DIR, help="output folder (default: dashboards/)")
    args = ap.parse_args()
    stale = []
    for name, build in DASHBOARDS.items():
        path = args.out / name
        text = render(build)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.write_text(text)
            print(f"wrote {path}")
    if stale:
        print("out of date (run dashboards/generator/generate.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The building blocks of bench's Grafana dashboards: PromQL helpers for k6's remote-write series,
panel builders (time series, stat, table, bar chart), a grid Layout, the template variables and the
dashboard wrapper. Every dashboard module (run_overview.py, controllers.py, comparison.py) builds
from these, so every panel follows the same conventions."""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[3]
OUT_DIR = ROOT / "dashboards"

DS = {"type": "prometheus", "uid": "${datasource}"}
# The percentiles the published results use, as (label, quantile), the error classes and the
# warm-up's scenario and role: from scenarios/contract.json, their one statement.
CONTRACT = json.loads((ROOT / "scenarios" / "contract.json").read_text())
PERCENTILES = [(p["key"], p["quantile"]) for p in CONTRACT["percentiles"]["list"]]
ERROR_CLASSES = list(CONTRACT["errorClasses"]["causes"])
WARMUP = CONTRACT["warmup"]
# Every k6 selector is scoped to the selected run(s), without setup()/teardown() requests (a
# scenario's target probe in setup() is not part of the measured load; k6 tags it group="::setup")
# and without the warm-up (BENCH_WARMUP: at the target rate before the measured duration, in no
# figure; dropped_iterations carries its scenario, not its role).
RUN_ALL = 'testid=~"$testid", group!~"::(setup|teardown)"'
RUN = RUN_ALL + f', scenario!="{WARMUP["scenario"]}"'
# Per-request k6 metrics count the load scenarios only (role="load"), as summary.json does: the churn
# VU's convergence probes (role="churn", about 50 req/s on fresh connections) are not measured load.
LOAD = RUN + ', role="load"'
# The warm-up's requests: only to mark its window (run overview).
WARMUP_LOAD = RUN_ALL + f', role="{WARMUP["role"]}"'
REQUEST_METRICS = {"k6_http_reqs_total", "k6_http_req_duration_seconds", "k6_data_sent_total",
                   "k6_data_received_total"}


def selector(metric):
    return LOAD if metric in REQUEST_METRICS else RUN


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


def sum_rate(metric, by="", matchers=""):
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} (rate({metric}{{{matchers}}}[$__rate_interval]))"


def sum_increase(metric, by="", matchers=""):
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} (increase({metric}{{{matchers}}}[$__rate_interval]))"


def classic_quantile(q, metric, by="le", matchers="", scale=""):
    return f"histogram_quantile({q}, sum by ({by}) (rate({metric}_bucket{{{matchers}}}[$__rate_interval]))){scale}"


# Presence probes: one cheap series per controller whose metrics are scraped.


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

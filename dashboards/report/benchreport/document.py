"""The report as a list of blocks (headings, text, tables, charts), rendered to Markdown and HTML
from the same blocks so both formats always carry the same numbers."""

import html
from dataclasses import dataclass, field

from . import charts, repeats
from .timeline import NO_EVENT, OUTLIER_FACTOR, attribution_of, sentence
from .summary import (CONVERGENCE_EVENTS, ERROR_CLASSES, LATENCY_KEYS, PERCENTILES,
                      SETTINGS_ORDER)
from .verdict import judge


@dataclass
class Block:
    kind: str                     # h1, h2, h3, p, warn, ok, table, chart
    text: str = ""
    headers: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    name: str = ""                # chart file name
    svg: str = ""


def fmt(value):
    """Numbers as the tables show them: whole numbers plain, others with at most 3 decimals."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if float(value).is_integer():
            return str(int(value))
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return str(value)


def _file_runs(runs):
    """The first Run of each summary file (the whole run, not its by_path entries)."""
    return [r for r in runs if not r.path_name]


PROVENANCE_ROWS = ("chart", "subcharts", "kubernetes", "nodes", "controller_images", "runners")


def _provenance_cell(p, key):
    """One settings-table cell of a summary's provenance (make rerun runs it again from the file)."""
    if not p:
        return "n/a"
    if key == "chart":
        c = p.get("chart") or {}
        return f"{c.get('name')} {c.get('version')} (release {p.get('release')} revision {p.get('revision')})" if c else "n/a"
    if key == "subcharts":
        return ", ".join(f"{n} {v}" for n, v in (p.get("subcharts") or {}).items()) or "none"
    if key == "kubernetes":
        return fmt(p.get("kubernetes_version"))
    if key == "nodes":
        n = p.get("nodes")
        return "n/a" if not n else f"{n['count']}: " + "; ".join(
            f"{k['count']} x {k.get('instance_type') or 'untyped'} {k.get('arch')} {k.get('cpu')} CPU {k.get('memory')}"
            for k in n["kinds"])
    if key == "controller_images":
        images = p.get("controller_images")
        return "n/a" if images is None else ", ".join(sorted({i.get("image_id") or i.get("image") or "?" for i in images})) or "none"
    r = p.get("runners") or {}
    return f"{fmt(r.get('count'))} x {r.get('image') or 'n/a'}" if r else "n/a"


def _settings_table(runs):
    file_runs = _file_runs(runs)
    keys = [k for k in SETTINGS_ORDER if any(k in r.settings for r in file_runs)]
    keys += sorted({k for r in file_runs for k in r.settings} - set(keys))
    rows = [["testid"] + [r.testid for r in file_runs],
            ["scenario"] + [r.scenario or "n/a" for r in file_runs],
            ["controller"] + [r.controller or "n/a" for r in file_runs]]
    rows += [[k] + [fmt(r.settings.get(k)) for r in file_runs] for k in keys]
    rows += [[f"requests.{k}"] + [fmt(r.requests.get(k)) for r in file_runs]
             for k in ("rate_target", "rate_achieved", "total", "dropped_iterations")]
    extra = sorted({k for r in file_runs for k in r.extra})
    rows += [[k] + [fmt(r.extra.get(k)) for r in file_runs] for k in extra]
    rows += [["scale_events"] + [fmt(r.scale_events) for r in file_runs]]
    if any(r.provenance for r in file_runs):
        rows += [[f"provenance.{k}"] + [_provenance_cell(r.provenance, k) for r in file_runs] for k in PROVENANCE_ROWS]
    rows += [["summary file"] + [r.source for r in file_runs]]
    return Block("table", headers=["setting"] + [r.label for r in file_runs], rows=rows)


def _latency_table(runs):
    order = ["min", "avg"] + PERCENTILES + ["max"]
    assert set(order) == set(LATENCY_KEYS)
    return Block("table", headers=["run", "requests"] + [f"{k} (ms)" for k in order],
                 rows=[[r.label, fmt(r.total_requests)] + [fmt(r.latency_ms.get(k)) for k in order]
                       for r in runs])


def _errors_table(runs):
    rows = []
    for r in runs:
        attempted = r.total_requests
        share = f"{100.0 * r.total_errors / attempted:.4g}%" if attempted else "n/a"
        rows.append([r.label, fmt(attempted)] + [fmt(r.errors[c]) for c in ERROR_CLASSES]
                    + [fmt(r.total_errors), share])
    return Block("table", headers=["run", "requests"] + ERROR_CLASSES + ["total", "errors %"], rows=rows)


def _error_causes_table(runs):
    """What each class was made of (summary error_causes): one column per class/cause any run saw;
    None when no run has a non-zero cause (or only older summaries without them)."""
    columns = []
    for c in ERROR_CLASSES:
        for cause in sorted({k for r in runs for k, v in (r.error_causes.get(c) or {}).items() if v}):
            columns.append((c, cause))
    if not columns:
        return None
    rows = [[r.label] + [fmt((r.error_causes.get(c) or {}).get(cause, 0)) for c, cause in columns] for r in runs]
    return Block("table", headers=["run"] + [f"{c}/{cause}" for c, cause in columns], rows=rows)


def _convergence_table(runs):
    headers = ["run", "scale events"]
    for e in CONVERGENCE_EVENTS:
        headers += [f"{e} count", f"{e} p50 (ms)", f"{e} max (ms)"]
    rows = []
    for r in _file_runs(runs):
        row = [r.label, fmt(r.scale_events)]
        for e in CONVERGENCE_EVENTS:
            s = r.convergence_ms.get(e, {})
            row += [fmt(s.get("count")), fmt(s.get("p50")), fmt(s.get("max"))]
        rows.append(row)
    return Block("table", headers=headers, rows=rows)


ROUTE_PRE_READY = ["404", "503"]  # the other buckets are summed in one column


def _routes_table(runs):
    """One row per run and route kind: the migration A/B (httproute, ingress) side by side."""
    rows = []
    for r in _file_runs(runs):
        for kind, k in (r.routes.get("by_kind") or {}).items():
            p = k.get("propagation_ms") or {}
            pre = k.get("pre_ready_statuses") or {}
            other = sum(v for b, v in pre.items() if b not in ROUTE_PRE_READY)
            scale = k.get("scale_ms") or {}
            rows.append([r.label, r.routes.get("experiment"), kind, fmt(k.get("created")), fmt(k.get("serving")),
                         fmt(k.get("unconverged")), fmt(p.get("p50")), fmt(p.get("p90")), fmt(p.get("p99")),
                         fmt(p.get("max"))] + [fmt(pre.get(b)) for b in ROUTE_PRE_READY]
                        + [fmt(other), fmt(k.get("changes")), fmt(k.get("change_errors")), fmt(k.get("load_non_2xx")),
                           fmt(scale.get("applied")), fmt(scale.get("all_serving")), fmt(scale.get("after_last_apply"))])
    return Block("table", headers=["run", "experiment", "kind", "created", "serving", "unconverged",
                                   "propagation p50 (ms)", "p90 (ms)", "p99 (ms)", "max (ms)", "404s before 200",
                                   "503s before 200", "other before 200", "changes", "change errors",
                                   "load non-2xx", "applied (ms)", "all serving (ms)", "after last apply (ms)"],
                 rows=rows)


def _interval(e):
    return f"{fmt(round(e.low, 3))} to {fmt(round(e.high, 3))}" if e and e.low is not None else "n/a"


def repeats_blocks(runs):
    """The "Repeats" section: per series and figure the median, 95 % interval and CV across its
    repeats, then every other series against the first; [] without a series of two or more runs."""
    series = repeats.group(runs)
    if not any(len(m) > 1 for m in series.values()):
        return []
    blocks = [Block("h2", "Repeats"),
              Block("p", f"Each figure as the median across a series' repeats, its {repeats.CONFIDENCE * 100:g} % "
                         f"interval (percentile bootstrap over runs, {repeats.RESAMPLES:,} resamples; none "
                         f"below {repeats.MIN_REPEATS} repeats) and its coefficient of variation (CV).")]
    figures = {sid: repeats.figures_of(members) for sid, members in series.items()}
    rows = []
    for sid, members in series.items():
        for name, unit, _read in repeats.FIGURES:
            e = repeats.estimate(figures[sid][name])
            rows.append([sid, fmt(len(members)), f"{name} ({unit})" if unit else name,
                         fmt(round(e.median, 3)) if e else "n/a", _interval(e),
                         f"{e.cv:.1%}" if e and e.cv is not None else "n/a"])
    blocks.append(Block("table", headers=["series", "repeats", "figure", "median", "95 % interval", "CV"],
                        rows=rows))
    ids = list(series)
    if len(ids) > 1:
        blocks.append(Block("p", f"Against {ids[0]}: the difference of medians (other minus {ids[0]}) with its "
                                 "bootstrap interval. Different only where the interval excludes zero; "
                                 "otherwise inconclusive, with the repeats per series that would resolve the "
                                 "difference seen (95 % confidence, 80 % power, normal approximation)."))
        rows = []
        for sid in ids[1:]:
            for name, _unit, _read in repeats.FIGURES:
                c = repeats.compare(name, figures[ids[0]][name], figures[sid][name])
                verdict = c.verdict
                if c.verdict == "inconclusive":
                    verdict = (f"inconclusive, run more repeats (about {c.repeats_needed} per series)"
                               if c.repeats_needed else "inconclusive, no difference seen")
                rows.append([sid, name, fmt(round(c.difference, 3)) if c.difference is not None else "n/a",
                             _interval(c), verdict])
        blocks.append(Block("table", headers=["series", "figure", "difference", "95 % interval", "verdict"],
                            rows=rows))
    return blocks


def _controller_cost_blocks(runs):
    """The controller's CPU and memory per merged run (summary controller_cost); [] when no run has it."""
    costed = [r for r in _file_runs(runs) if r.controller_cost]
    if not costed:
        return []
    per_route = any(r.controller_cost.get("routes") for r in costed)
    mib = lambda b: fmt(round(b / 2**20, 2)) if b is not None else fmt(None)  # noqa: E731
    rows = []
    for r in costed:
        c = r.controller_cost
        rows.append([r.label, fmt(r.total_requests), fmt(c.get("cpu_seconds")), fmt(c.get("cpu_seconds_per_1k_requests")),
                     mib(c.get("memory_peak_bytes"))]
                    + ([fmt(c.get("routes")), fmt(c.get("cpu_seconds_per_route")), mib(c.get("memory_peak_bytes_per_route"))]
                       if per_route else [])
                    + [", ".join(c.get("pods") or []) or "none", c.get("unknown_reason") or ""])
    headers = ["run", "requests", "CPU-seconds", "CPU-seconds per 1,000 requests", "peak memory (MiB)"] \
        + (["routes", "CPU-seconds per route", "peak memory per route (MiB)"] if per_route else []) \
        + ["pods", "unknown because"]
    return [Block("h2", "Controller cost"),
            Block("p", "What the controller's pods spent during the load, from the kubelet's cAdvisor series "
                       "(container_cpu_usage_seconds_total, container_memory_working_set_bytes; pods chosen by "
                       "the namespace and pod regexes of make results, the controller dashboard's by default)"
                       + ("; per route for the route experiments, over the routes the run created." if per_route else ".")),
            Block("table", headers=headers, rows=rows)]


def _runners_table(run):
    """One row per k6 runner of a merged run: its share, its latency and its own lag verdict."""
    rows = []
    for r in run.runners:
        lag = r.get("lag_ms") or {}
        verdict = {None: "not sampled", True: "CPU-BOUND", False: "ok"}[r.get("cpu_bound")]
        runtime = {None: "not sampled", True: "RUNTIME-BOUND", False: "ok"}[r.get("runtime_bound")]
        throttled = {None: "unknown", True: "THROTTLED", False: "ok"}[r.get("cpu_throttled")]
        latency = r.get("latency_ms") or {}
        rows.append([r["instance_id"], fmt(r.get("requests")), fmt(r.get("rate_target")), fmt(r.get("rate_achieved")),
                     fmt(r.get("dropped_iterations")), fmt(sum((r.get("errors") or {}).values())),
                     fmt(latency.get("p50")), fmt(latency.get("p99")), fmt(r.get("scale_events")),
                     fmt(lag.get("p95")), fmt(lag.get("p99")), verdict, fmt(r.get("sched_p99_ms")),
                     fmt(r.get("gc_cpu_fraction")), runtime, fmt(r.get("cpu_throttled_ratio")), throttled])
    return Block("table", headers=["runner (instance_id)", "requests", "target/s", "achieved/s", "dropped",
                                   "errors", "p50 (ms)", "p99 (ms)", "scale events", "lag p95 (ms)",
                                   "lag p99 (ms)", "lag verdict", "sched p99 (ms)", "GC CPU share",
                                   "runtime verdict", "CPU quota periods throttled", "throttle verdict"], rows=rows)


def _added_latency_blocks(direct, added):
    """The controller's share: per run and percentile, through minus direct, with its error bound."""
    if not direct:
        return []
    headers = ["run"] + [f"{p} (ms)" for p in PERCENTILES]
    rows = [[label] + [(f"{fmt(v['added_ms'])} ± {fmt(v['error_ms'])}" if v["added_ms"] is not None else "n/a")
                       for v in (per[p] for p in PERCENTILES)]
            for label, per in added.items()]
    return [Block("h2", "Controller's added latency"),
            Block("p", f"Each run's percentiles minus those of the control run {direct.label} (testid "
                       f"{direct.testid}: the same experiment direct to the backend pods). The ± bound adds "
                       "both sides' worst case: a merged percentile is exact to one native-histogram bucket "
                       "(merge.percentile_max_error_pct), a runner's own summary is exact. A negative "
                       "figure within its bound is noise, not a faster controller."),
            Block("table", headers=headers, rows=rows)]


def build(runs, budgets, warnings, series, generated_at, prometheus_url, direct=None, added=None):
    """series: {testid: TimeSeries} (empty without Prometheus); returns (blocks, verdicts). The
    sections in report order, each built by its own function."""
    blocks = [Block("h1", "bench report"),
              Block("p", f"Generated {generated_at} from {len(_file_runs(runs))} summary file(s), "
                         f"{len(runs)} measured series. Latencies in milliseconds.")]
    verdicts = {r.label: judge(r, budgets) for r in runs}
    blocks += _verdict_blocks(runs, budgets, warnings, verdicts)
    blocks += repeats_blocks(runs)
    blocks += [Block("h2", "Settings"), _settings_table(runs)]
    blocks += _runners_blocks(runs)
    blocks += _controller_cost_blocks(runs)
    blocks += _latency_blocks(runs)
    blocks += _added_latency_blocks(direct, added or {})
    blocks += _errors_blocks(runs)
    blocks += _routes_blocks(runs)
    blocks += _controller_restart_blocks(runs, series)
    blocks += _dataplane_scale_blocks(runs, series)
    blocks += _controller_upgrade_blocks(runs, series)
    blocks += _backend_failover_blocks(runs, series)
    blocks += _long_lived_blocks(runs, series)
    blocks += _attribution_blocks(runs, series)
    blocks += _convergence_blocks(runs)
    blocks += _over_time_blocks(runs, series, prometheus_url)
    return blocks, verdicts


def _verdict_blocks(runs, budgets, warnings, verdicts):
    """PASS/FAIL/NO DATA/INCOMPLETE per run, and whether the runs compare."""
    blocks = []
    blocks.append(Block("h2", "Verdict"))
    blocks.append(Block("p", "Budgets (each a maximum): " + ", ".join(b.text for b in budgets)))
    blocks.append(Block("table", headers=["run", "testid", "verdict", "why"],
                        rows=[[r.label, r.testid, verdicts[r.label].status,
                               "; ".join(verdicts[r.label].reasons) or "every budget met"] for r in runs]))
    if warnings:
        blocks += [Block("warn", w) for w in warnings]
    else:
        blocks.append(Block("ok", "Comparable: same rate, duration, path, connections, keepalive, TLS, "
                                  "timeout and k6 release; no dropped iterations."))
    return blocks


def _runners_blocks(runs):
    """One table per merged run: its runners and the merge notes."""
    blocks = []
    merged = [r for r in _file_runs(runs) if r.runners]
    if merged:
        blocks.append(Block("h2", "Runners"))
        blocks.append(Block("p", "Merged from every k6 runner's series in Prometheus: counts summed, "
                                 "percentiles from the sum of the runners' native histograms (within one "
                                 "bucket, about 9%), a lag verdict, a Go-runtime verdict and a CPU-throttle verdict "
                                 "(its cgroup's CPU limit; unknown where the cgroup was not read) per runner."))
        for r in merged:
            blocks.append(Block("h3", f"{r.label} (testid {r.testid}): {len(r.runners)} runner(s)"))
            blocks.append(_runners_table(r))
            blocks += [Block("warn", f"Merge note: {n}") for n in r.merge_notes]
    return blocks


def _latency_blocks(runs):
    """The percentile table and the percentile-distribution charts."""
    blocks = []
    blocks.append(Block("h2", "Latency percentiles"))
    blocks.append(_latency_table(runs))
    pct_charts = []
    if len(runs) > 1:
        pct_charts.append(Block("chart", "All runs overlaid", name="percentiles-overlay.svg",
                                svg=charts.percentile_chart(runs, "latency by percentile, all runs")))
    for i, r in enumerate(runs, 1):
        pct_charts.append(Block("chart", f"{r.label}", name=f"percentiles-{i}.svg",
                                svg=charts.percentile_chart([r], f"latency by percentile: {r.label}")))
    blocks += pct_charts
    return blocks


def _errors_blocks(runs):
    """Errors by class, then by cause."""
    blocks = []
    blocks.append(Block("h2", "Errors"))
    blocks.append(_errors_table(runs))
    causes = _error_causes_table(runs)
    if causes:
        blocks.append(Block("p", "By cause (scenarios/README.md, error taxonomy): connection/tls_handshake is a "
                                 "handshake cut or refused, read/replayed a request lost on a reused keep-alive "
                                 "connection that Go re-sent (counted as wrk counted it)."))
        blocks.append(causes)
    return blocks


def _routes_blocks(runs):
    """The route experiments' table; [] without a route run."""
    blocks = []
    if any(r.routes for r in _file_runs(runs)):
        blocks.append(Block("h2", "Routes"))
        blocks.append(Block("p", "Route experiments (scenarios/README.md, \"Routes\"): per route, the time from its "
                                 "create call to its first 200 through the data plane, the answers before it, and "
                                 "for route-change every non-2xx while routes changed (zero passes). With "
                                 "BENCH_ROUTE_KIND=both one run holds the migration A/B: HTTPRoute and Ingress on "
                                 "the same controller, one row each (their load: the by_path rows above)."))
        blocks.append(_routes_table(runs))
    return blocks


def _controller_restart_blocks(runs, series):
    """controller-restart's table, and with Prometheus the share of errors that followed a deletion;
    [] without a controller-restart run."""
    restarts, blocks = _experiment(runs, "controller_restart", "Controller restart", (
        "The controller's pods (or its control plane's) deleted one at a time under load "
        "(scenarios/controller-restart.js). Per pod, from its delete call: replaced = its "
        "replacement Ready, recovered = the path answering every probe again (0: no probe "
        "failed). Requests lost: the load's failed requests, every class; zero passes."))
    if not restarts:
        return []
    rows = []
    for r in restarts:
        c = r.controller_restart
        rep, rec = c.get("replaced_ms") or {}, c.get("recovered_ms") or {}
        gate = c.get("gate") or {}
        rows.append([r.label, fmt(c.get("namespace")), fmt(c.get("selector")), fmt(c.get("pods_deleted")),
                     fmt(c.get("unrecovered")), fmt(rep.get("p50")), fmt(rep.get("max")), fmt(rec.get("p50")),
                     fmt(rec.get("max")), fmt(c.get("requests_lost")), _by_class(r), _gate_cell(gate)])
    blocks.append(Block("table", headers=["run", "namespace", "pods", "deleted", "unrecovered", "replaced p50 (ms)",
                                          "replaced max (ms)", "recovered p50 (ms)", "recovered max (ms)",
                                          "requests lost", "by class", "zero-error gate"], rows=rows))
    return blocks + _sentences(restarts, series)


def _by_class(run):
    """The run's errors by class, e.g. 'connection 3, timeout 1', or 'none'."""
    return ", ".join(f"{cls} {n:g}" for cls, n in run.errors.items() if n) or "none"


def _gate_cell(gate):
    return "passed" if gate.get("passed") else "FAILED"


def _experiment(runs, key, title, about):
    """The runs whose summary has the experiment's section `key`, and the report section's heading
    and paragraph (no blocks without such a run)."""
    chosen = [r for r in _file_runs(runs) if getattr(r, key)]
    return chosen, [Block("h2", title), Block("p", about)] if chosen else []


def _sentences(runs, series, counted="errors"):
    """Per run with errors (counted="breaks": stream breaks) and events, the sentence of its
    attribution (benchreport.timeline)."""
    said = (sentence(r.label, attribution_of(r, series), counted) for r in runs)
    return [Block("p", s + " (Errors by event.)") for s in said if s]


# the churn's action for a scale step of the data plane (bench_scale_events{action})
DATAPLANE_SCALE = "dataplane_scale"


def _attribution_blocks(runs, series):
    """Per churn run (one with events): the sentence, and its errors and latency outliers by the kind
    of event they followed within W; [] when no run has events."""
    churned = [(r, attribution_of(r, series)) for r in _file_runs(runs)]
    churned = [(r, a) for r, a in churned if a and a.get("events")]
    if not churned:
        return []
    blocks = [Block("h2", "Errors by event"),
              Block("p", "Each error (counter rises per query step, by class) and each latency outlier (a step whose "
                         f"p99 is over {OUTLIER_FACTOR:g} x the run's median step p99) is attributed to the nearest "
                         "event before it within W, or to no event. Events: the churn's actions, route changes, "
                         "the controller's reloads where its counter is known.")]
    # long-lived's stream breaks, by the same rule, in a column of their own when a run had any
    breaks = any("streams_broken_total" in a for _, a in churned)
    rows = []
    for r, a in churned:
        for kind, b in list(a["events"].items()) + [(NO_EVENT, a["unattributed"])]:
            rows.append([r.label, fmt(a["window_s"]), kind, fmt(b.get("events", "")), fmt(b["errors_total"]),
                         "n/a" if b["share"] is None else f"{100 * b['share']:.0f} %",
                         ", ".join(f"{c} {n}" for c, n in b["errors"].items()), fmt(b["latency_outliers"])]
                        + ([", ".join(f"{c} {n}" for c, n in b.get("streams_broken", {}).items()) or "none"]
                           if breaks else []))
    blocks.append(Block("table", headers=["run", "W (s)", "event", "events", "errors", "share", "by class",
                                          "latency outliers"] + (["stream breaks"] if breaks else []), rows=rows))
    return blocks + _sentences([r for r, _ in churned], series)


def _dataplane_scale_blocks(runs, series):
    """dataplane-scale's table, its steps with the load's errors within W of each (the run's
    attribution timeline), and the attribution sentence; [] without a dataplane-scale run."""
    scaled, blocks = _experiment(runs, "dataplane_scale", "Data-plane scale", (
        "The data plane's Deployment scaled under load (scenarios/dataplane-scale.js), one "
        "replica per step (gradual) or straight to each level (abrupt). Per step, from its scale "
        "call: Ready = exactly that many replicas Ready; probes failed = the churn's probes not "
        "answered by a backend pod until the next step. Requests lost: the load's failed requests, "
        "every class; zero passes."))
    if not scaled:
        return []
    rows = []
    for r in scaled:
        d = r.dataplane_scale
        ready, gate = d.get("ready_ms") or {}, d.get("gate") or {}
        where = f"{d['namespace']}/{d['deployment']}" if d.get("deployment") else "n/a"
        # scaled through the object its controller copies the replicas from (NGF's NginxProxy): say which
        if d.get("scaled") and not d["scaled"].startswith("Deployment "):
            where += f" through {d['scaled']}"
        rows.append([r.label, where, fmt(d.get("mode")), _levels(d.get("levels")), _levels(d.get("levels_reached")),
                     fmt(len(d.get("steps") or [])), fmt(d.get("unready")), fmt(ready.get("p50")), fmt(ready.get("max")),
                     fmt(d.get("requests_lost")), _by_class(r), _gate_cell(gate)])
    blocks.append(Block("table", headers=["run", "Deployment", "mode", "levels", "levels reached", "steps", "not Ready",
                                          "Ready p50 (ms)", "Ready max (ms)", "requests lost", "by class",
                                          "zero-error gate"], rows=rows))
    step_rows = []
    for r in scaled:
        marks = [m for m in (attribution_of(r, series).get("timeline") or []) if m["kind"] == DATAPLANE_SCALE]
        steps = r.dataplane_scale.get("steps") or []
        for i, st in enumerate(steps):
            # the i-th scale mark is this step's when every step is one mark of its own
            errors = fmt(marks[i]["errors_total"]) if len(marks) == len(steps) else "n/a"
            step_rows.append([r.label, fmt(st["step"]), f"{fmt(st['from'])} -> {fmt(st['to'])}",
                              "not Ready" if st["ready_ms"] is None else fmt(st["ready_ms"]), fmt(st["probe_failures"]),
                              errors])
    if step_rows:
        blocks.append(Block("table", headers=["run", "step", "replicas", "Ready after (ms)", "probes failed",
                                              "load errors within W"], rows=step_rows))
    return blocks + _sentences(scaled, series)


# controller-upgrade's actions: the rollout's update, an old pod seen terminating, a new pod Ready
UPGRADE_ACTIONS = ("controller_rollout", "controller_pod_terminating", "controller_pod_ready")


def _controller_upgrade_blocks(runs, series):
    """controller-upgrade's table, its pods' steps, the load's errors within W of each kind of rollout
    event (the run's attribution) and its sentence; [] without a controller-upgrade run."""
    upgraded, blocks = _experiment(runs, "controller_upgrade", "Controller upgrade", (
        "The controller's Deployment or DaemonSet rolled under load (scenarios/controller-upgrade.js): "
        "a new pod-template annotation and, when set, a new image for one container. From the "
        "rollout's update call: each old pod seen terminating, each new pod seen Ready, the rollout "
        "complete. Requests lost: the load's failed requests, every class; zero passes."))
    if not upgraded:
        return []
    rows, step_rows, event_rows = [], [], []
    for r in upgraded:
        u = r.controller_upgrade
        gate = u.get("gate") or {}
        where = f"{u['kind']} {u['namespace']}/{u['name']}" if u.get("name") else "n/a"
        change = (f"{u.get('container')}: {fmt(u.get('image_from'))} -> {u['image_to']}" if u.get("image_to")
                  else "annotation" if u.get("name") else "n/a")
        rows.append([r.label, where, change, fmt(u.get("at_end")), fmt(u.get("pods_terminating")), fmt(u.get("pods_ready")),
                     "not complete" if u.get("rollout_ms") is None else fmt(u["rollout_ms"]),
                     fmt(u.get("requests_lost")), _by_class(r), _gate_cell(gate)])
        step_rows += [[r.label, fmt(st["step"]), fmt(st["old_terminating_ms"]), fmt(st["new_ready_ms"])]
                      for st in u.get("steps") or []]
        kinds = attribution_of(r, series).get("events") or {}
        for action in UPGRADE_ACTIONS:
            if action in kinds:
                event_rows.append([r.label, action, fmt(kinds[action]["events"]), fmt(kinds[action]["errors_total"])])
    blocks.append(Block("table", headers=["run", "workload", "change", "at the end", "old pods terminating",
                                          "new pods Ready", "rollout (ms)", "requests lost", "by class",
                                          "zero-error gate"], rows=rows))
    if step_rows:
        blocks.append(Block("table", headers=["run", "pod", "old pod terminating (ms)", "new pod Ready (ms)"],
                            rows=step_rows))
    if event_rows:
        blocks.append(Block("table", headers=["run", "event", "events", "load errors within W"], rows=event_rows))
    return blocks + _sentences(upgraded, series)


# the churn's actions when the flapping backend pod turns unhealthy and healthy again (backend-failover)
BACKEND_UNHEALTHY, BACKEND_HEALTHY = "backend_unhealthy", "backend_healthy"


def _backend_failover_blocks(runs, series):
    """backend-failover's table, each flap with the load's errors within W of its two events by class
    (the run's attribution timeline), and the attribution sentence; [] without a backend-failover run."""
    flapped, blocks = _experiment(runs, "backend_failover", "Backend failover", (
        "One backend pod flapping between healthy and unhealthy under load "
        "(scenarios/backend-failover.js): mode errors answers 503 on every path but /healthz, so "
        "only the controller's passive health checks, retries or ejection keep the errors from "
        "clients; mode close closes those connections unanswered (nginx 444), which a proxy sees as "
        "its upstream closing the connection before a response; mode readiness fails /healthz alone, "
        "so the kubelet takes the pod out and the controller must follow. Per flap: unhealthy = how "
        "long the pod failed, not Ready = from its first failure until the API showed it not Ready. "
        "The gate: readiness none may fail, errors and close a budget per flap."))
    if not flapped:
        return []
    rows = []
    for r in flapped:
        f = r.backend_failover
        u, n, gate = f.get("unhealthy_ms") or {}, f.get("not_ready_ms") or {}, f.get("gate") or {}
        rows.append([r.label, fmt(f.get("mode")), fmt(f.get("flaps")), fmt(u.get("p50")), fmt(u.get("max")),
                     fmt(n.get("p50")), fmt(n.get("max")), fmt(f.get("requests_lost")), fmt(f.get("errors_per_flap")),
                     _by_class(r), f"{_gate_cell(gate)} (at most {fmt(gate.get('max_errors'))})"])
    blocks.append(Block("table", headers=["run", "mode", "flaps", "unhealthy p50 (ms)", "unhealthy max (ms)", "not Ready p50 (ms)",
                                          "not Ready max (ms)", "requests lost", "per flap", "by class", "gate"],
                        rows=rows))
    flap_rows = []
    for r in flapped:
        for i, flap in enumerate(_flaps(attribution_of(r, series).get("timeline") or [])):
            errors = {}
            for m in flap:
                for c, n in m["errors"].items():
                    errors[c] = errors.get(c, 0) + n
            until = f"{flap[1]['t_s'] - flap[0]['t_s']:g} s" if len(flap) > 1 else "n/a"
            flap_rows.append([r.label, fmt(i + 1), f"{flap[0]['t_s']:g} s", until,
                              fmt(sum(m["errors_total"] for m in flap)),
                              ", ".join(f"{c} {n:g}" for c, n in errors.items()) or "none"])
    if flap_rows:
        blocks.append(Block("table", headers=["run", "flap", "from", "until healthy", "load errors within W",
                                              "by class"], rows=flap_rows))
    return blocks + _sentences(flapped, series)


def _long_lived_blocks(runs, series):
    """long-lived's tables: per run its gate, per kind of stream its counts; and the attribution
    sentences of its stream breaks and of the load's errors to the disruptions; [] without a
    long-lived run."""
    held, blocks = _experiment(runs, "long_lived", "Long-lived streams", (
        "HTTP streams, WebSocket connections and gRPC server streams held open through the path "
        "while the disruptions ran (scenarios/long-lived.js): reload = one extra route created and "
        "deleted (NGINX-based controllers reload), backend = the stream backend scaled up by two and "
        "back, controller = the controller's pods deleted in turn. A stream ended before its time is "
        "broken: by the backend when the stream backend ended it cleanly on its way down, by the path "
        "otherwise. Messages carry time slots, so a client counts every one it missed. The gate: "
        "no stream broken by the path and no failed request."))
    if not held:
        return []
    rows, kind_rows = [], []
    for r in held:
        ll = r.long_lived
        rows.append([r.label, ", ".join(ll.get("disruptions") or []) or fmt(ll.get("disruptions")),
                     fmt(ll.get("broken_by_path")), fmt(ll.get("broken_by_backend")), fmt(ll.get("open_errors")),
                     fmt(ll.get("messages_lost")), fmt(ll.get("requests_lost")), _gate_cell(ll.get("gate") or {})])
        for kind, k in (ll.get("by_kind") or {}).items():
            b, after = k.get("broken") or {}, k.get("broken_after_ms") or {}
            kind_rows.append([r.label, kind, fmt(k.get("opened")), fmt(b.get("reset")), fmt(b.get("backend_stop")),
                              fmt(k.get("open_errors")), fmt(k.get("messages")), fmt(k.get("messages_lost")),
                              fmt(after.get("p50"))])
    blocks.append(Block("table", headers=["run", "disruptions", "broken by path", "ended by backend", "open errors",
                                          "messages lost", "requests lost", "gate"], rows=rows))
    blocks.append(Block("table", headers=["run", "kind", "opened", "broken by path", "ended by backend", "open errors",
                                          "messages", "lost", "broken after p50 (ms)"], rows=kind_rows))
    return blocks + _sentences(held, series, "breaks") + _sentences(held, series)


def _flaps(timeline):
    """The timeline's flaps: each backend_unhealthy mark with the backend_healthy mark after it (a
    flap's errors can be pushed after the pod is healthy again: W then gives them to that mark)."""
    flaps = []
    for m in timeline:
        if m["kind"] == BACKEND_UNHEALTHY:
            flaps.append([m])
        elif m["kind"] == BACKEND_HEALTHY and flaps and len(flaps[-1]) == 1:
            flaps[-1].append(m)
    return flaps


def _levels(levels):
    """3,1 for [3, 1]; n/a when unknown (a merged run)."""
    return "n/a" if levels is None else ",".join(str(n) for n in levels) or "none"


def _convergence_blocks(runs):
    """Scale events and endpoint convergence."""
    blocks = []
    blocks.append(Block("h2", "Endpoint convergence"))
    blocks.append(Block("p", "Time from a scale step until responses show the new set of backend pods."))
    blocks.append(_convergence_table(runs))
    if any(r.convergence_ms.get(e, {}).get("max") is not None for r in runs for e in CONVERGENCE_EVENTS):
        blocks.append(Block("chart", "Endpoint convergence", name="convergence.svg",
                            svg=charts.convergence_chart(_file_runs(runs))))
    return blocks


def _over_time_blocks(runs, series, prometheus_url):
    """Per run, its time series chart and scale events (needs Prometheus)."""
    blocks = []
    blocks.append(Block("h2", "Over time"))
    if not prometheus_url:
        blocks.append(Block("warn", "Time series unavailable: no --prometheus URL was given "
                                    "(latency and errors over time need the run's Prometheus)."))
    for i, r in enumerate(_file_runs(runs), 1) if prometheus_url else ():
        ts = series.get(r.testid)
        blocks.append(Block("h3", f"{r.label} (testid {r.testid})"))
        for note in (ts.notes if ts else [f"no time series for testid {r.testid}"]):
            blocks.append(Block("warn", f"Time series unavailable: {note}"))
        desired = [v for _, v in (ts.replicas.get("desired") or [])] if ts else []
        if desired:
            blocks.append(Block("p", f"Backend replicas (desired, from k6_bench_replicas_desired): "
                                     f"{fmt(min(desired))} to {fmt(max(desired))}."))
        if ts and ts.request_rate:
            blocks.append(Block("chart", f"{r.label} over time", name=f"timeseries-{i}.svg",
                                svg=charts.timeseries_chart(ts, r.label)))
            if not ts.scale_events:
                blocks.append(Block("p", "No scale event recorded in this run."))
            marks = (ts.attribution or {}).get("timeline")
            if marks:
                blocks.append(Block("p", f"Events on the timeline, each with the errors and latency outliers "
                                         f"attributed to it (within W = {fmt(ts.attribution['window_s'])} s, "
                                         f"query step {fmt(ts.step)} s); the rest are no event's (Errors by event)."))
                broke = "streams_broken_total" in marks[0]  # a run whose streams broke (long-lived)
                blocks.append(Block("table", headers=["seconds since start", "event", "events", "errors within W",
                                                      "by class", "latency outliers"]
                                    + (["stream breaks within W"] if broke else []),
                                    rows=[[fmt(m["t_s"]), m["kind"], fmt(m["events"]), fmt(m["errors_total"]),
                                           ", ".join(f"{c} {n}" for c, n in m["errors"].items()),
                                           fmt(m["latency_outliers"])]
                                          + ([fmt(m["streams_broken_total"])] if broke else []) for m in marks]))
            elif ts.scale_events:
                blocks.append(Block("table", headers=["seconds since start", "action", "events"],
                                    rows=[[fmt(round(t, 1)), a, fmt(n)] for t, a, n in ts.scale_events]))
    return blocks


def _md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks):
    out = []
    for b in blocks:
        if b.kind in ("h1", "h2", "h3"):
            out.append("#" * int(b.kind[1]) + " " + b.text)
        elif b.kind == "p":
            out.append(b.text)
        elif b.kind == "warn":
            out.append(f"> **Warning:** {b.text}")
        elif b.kind == "ok":
            out.append(f"> {b.text}")
        elif b.kind == "table":
            lines = ["| " + " | ".join(_md_cell(h) for h in b.headers) + " |",
                     "|" + "|".join("---" for _ in b.headers) + "|"]
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b.rows]
            out.append("\n".join(lines))
        elif b.kind == "chart":
            out.append(f"![{b.text}](charts/{b.name})")
    return "\n\n".join(out) + "\n"


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { border-bottom: 2px solid #444; }
h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f2f2f2; }
.warn { background: #fff4e5; border-left: 4px solid #f0a020; padding: 0.5em 1em; }
.ok { background: #eaf7ea; border-left: 4px solid #3a3; padding: 0.5em 1em; }
.PASS { color: #176d17; font-weight: bold; }
.FAIL, .NO-DATA, .INCOMPLETE { color: #b00020; font-weight: bold; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; }
"""


def _is_number(text):
    try:
        float(str(text).rstrip("%"))
        return True
    except ValueError:
        return False


def to_html(blocks):
    esc = html.escape
    svgs = charts.svg_ids_unique([b.svg for b in blocks if b.kind == "chart"])
    body, chart_i = [], 0
    for b in blocks:
        if b.kind in ("h1", "h2", "h3"):
            body.append(f"<{b.kind}>{esc(b.text)}</{b.kind}>")
        elif b.kind == "p":
            body.append(f"<p>{esc(b.text)}</p>")
        elif b.kind in ("warn", "ok"):
            prefix = "<strong>Warning:</strong> " if b.kind == "warn" else ""
            body.append(f'<p class="{b.kind}">{prefix}{esc(b.text)}</p>')
        elif b.kind == "table":
            head = "".join(f"<th>{esc(str(h))}</th>" for h in b.headers)
            rows = []
            for row in b.rows:
                cells = []
                for c in row:
                    cls = ""
                    if c in ("PASS", "FAIL", "NO DATA", "INCOMPLETE"):
                        cls = f' class="{c.replace(" ", "-")}"'
                    elif _is_number(c):
                        cls = ' class="num"'
                    cells.append(f"<td{cls}>{esc(str(c))}</td>")
                rows.append("<tr>" + "".join(cells) + "</tr>")
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
        elif b.kind == "chart":
            body.append(f'<figure aria-label="{esc(b.text)}">{svgs[chart_i]}<figcaption>{esc(b.text)}'
                        "</figcaption></figure>")
            chart_i += 1
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>bench report</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")

"""Dashboard 1, run overview: one run live, offered vs achieved rate, latency percentiles to
p99.9999, error classes, backend replicas and endpoint convergence on one time axis."""
from .panels import (  # the panel vocabulary
    CONTRACT, DS, LOAD, Layout, PERCENTILES, RUN, WARMUP_LOAD, dashboard, datasource_variable, distribution_panel,
    k6_quantile, k6_rate, k6_total, stat, table, targets, testid_variable, textbox_variable, timeseries, zero_total,
    zero_while_running)

# The run's request and dropped-iteration rates, used by several rows.
REQS = k6_rate("k6_http_reqs_total")
DROPPED = k6_rate("k6_dropped_iterations_total")
# The warm-up's requests (BENCH_WARMUP): drawn beside the measured ones, and the window they fill
# marked on every panel (the annotation below); in no figure.
WARMUP_REQS = k6_rate("k6_http_reqs_total", labels=WARMUP_LOAD)


def load_row(lay):
    """Load: was the offered rate held?"""
    lay.row("Load: was the offered rate held?")
    lay.add(timeseries(
        "Request rate: offered vs achieved",
        "Achieved = completed requests per second (all runners). Offered = achieved + dropped "
        "iterations: in the open model every iteration is one request, so what k6 could not start "
        "is the gap to the target rate. Warm-up: the requests of the warm-up before the measured "
        "duration (loadtest.warmup), at the same rate and left out of every other panel and figure; "
        "the Warm-up annotation marks its window.",
        targets((REQS, "achieved"), (f"{REQS} + ({zero_while_running(DROPPED)})", "offered"),
                (WARMUP_REQS, "warm-up (not measured)")),
        "reqps", minimum=0), 12, 8)
    lay.add(timeseries(
        "Dropped iterations",
        "Iterations the constant-arrival-rate executor could not start (no free VU). Non-zero means "
        "the generator, not the target, limited the rate: raise connections or runners.",
        targets((zero_while_running(DROPPED), "dropped/s")), "reqps", bars=True, minimum=0), 6, 8)
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
        targets((lag_p95, "runner lag p95"), (zero_while_running(DROPPED), "dropped/s")), "s",
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
    lay.add(timeseries(
        "Runner pushes reaching Prometheus: age of each runner's newest request sample",
        "Seconds since each runner (instance_id) last wrote its request counter to Prometheus. k6's "
        "remote write pushes every 5 s (K6_PROMETHEUS_RW_PUSH_INTERVAL), so a runner whose pushes land "
        "stays below that; one whose pushes fail (k6 logs \"Failed to send the time series data\" and "
        "never sends that push again) climbs: every panel here lacks its share from then on. Gaps mid-run "
        "heal (the next push carries the counters again), a lost final push does not: make results "
        "compares each runner's series with the end-of-run record it writes after its summary and marks "
        "the result incomplete when they differ and cannot be restored. After the run every line climbs.",
        targets(("time() - max by (instance_id) (timestamp(k6_http_reqs_total{%s}))" % LOAD,
                 "runner {{instance_id}}")), "s", minimum=0), 24, 6)


def latency_row(lay):
    """Latency: percentiles over time (native histograms, merged across runners)"""
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


def errors_row(lay):
    """Errors: which class, when"""
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
        targets((f"({zero_while_running(k6_rate('k6_bench_errors_total'))}) / {REQS}", "errors / requests")),
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


def churn_row(lay):
    """Churn: backend replicas and how fast the path converged"""
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
        "Actions taken by the churn scenario (scale, rollout, podkill, controller_podkill, dataplane_scale, "
        "controller_rollout and its pod events; backend_unhealthy, backend_healthy: the flips backend-failover "
        "saw) per rate interval.",
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
    lay.add(count_p50_p99_table(
        "Endpoint convergence over range",
        "Count, p50 and max-ish (p99) convergence per event over the dashboard range.",
        conv, "event", "events"), 12, 8)


def count_p50_p99_table(title, description, metric, by, count_name):
    """A table of a native-histogram time trend over the dashboard range: per value of `by`, how
    many samples (column count_name), p50 and p99."""
    return table(
        title, description,
        targets((f"histogram_count(sum by ({by}) (increase({metric}{{{RUN}}}[$__range])))", ""),
                (k6_quantile("0.5", metric, by=by, window="$__range"), ""),
                (k6_quantile("0.99", metric, by=by, window="$__range"), ""),
                instant=True, table=True),
        "s", {"Value #A": count_name, "Value #B": "p50", "Value #C": "p99"},
        order=[by, count_name, "p50", "p99"],
        overrides=[{"matcher": {"id": "byName", "options": count_name},
                    "properties": [{"id": "unit", "value": "short"}, {"id": "decimals", "value": 0}]}])


def controller_restart_row(lay):
    """Controller restart: pods deleted, replaced, recovered (controller-restart)"""
    lay.row("Controller restart: pods deleted, replaced, recovered (controller-restart)")
    lay.add(stat(
        "Controller pods deleted",
        "controller-restart (scenarios/controller-restart.js) deletes the controller's pods one at a "
        "time; each deletion is also a Scale events entry (action controller_podkill) and an "
        "annotation, so the errors above line up with it.",
        targets((zero_total(k6_total("k6_bench_scale_events_total", "testid", f'{RUN}, action="controller_podkill"'),
                            "testid"), "deleted"), instant=True), "short", decimals=0), 8, 8)
    # k6 writes each runner's cumulative histogram; a deletion is a one-off sample at the series'
    # start, which increase() over a range cannot see (no sample before it), so the panel plots the
    # cumulative mean itself
    recovery = "sum by (measure) (k6_bench_controller_recovery_seconds{%s})" % RUN
    lay.add(timeseries(
        "Controller recovery: mean time per deletion so far",
        "Per deleted controller pod, from its delete call: replaced = until its replacement was "
        "Ready; recovered = until the path answered every probe of the churn VU again (0 when none "
        "failed). The mean over the deletions so far, by measure; the run's summary has their count, "
        "p50 and max.",
        targets((f"histogram_sum({recovery}) / histogram_count({recovery})", "{{measure}}")),
        "s", minimum=0), 16, 8)


def dataplane_scale_row(lay):
    """Data-plane scale: replicas, steps, time to Ready (dataplane-scale)"""
    lay.row("Data-plane scale: replicas, steps, time to Ready (dataplane-scale)")
    lay.add(timeseries(
        "Data-plane replicas",
        "dataplane-scale (scenarios/dataplane-scale.js) scales the controller's data-plane Deployment; "
        "desired = its spec.replicas, ready = its status.readyReplicas, as the churn VU polls them "
        "(each step is also a Scale events entry, action dataplane_scale, and an annotation).",
        targets((f'max by (state) (k6_bench_dataplane_replicas{{{RUN}, state=~"desired|ready"}})', "{{state}}")),
        "short", steps=True, minimum=0), 10, 8)
    # one sample per step: its histogram's sum is that step's time (increase() over a range cannot
    # see a series' only sample, as for the controller recovery above)
    lay.add(timeseries(
        "Data-plane time to Ready per step",
        "Per scale step, from its scale call until exactly that many replicas were Ready; a step "
        "never Ready has no line. The run's summary has each step's replicas and time.",
        targets((f"histogram_sum(sum by (step) (k6_bench_dataplane_ready_seconds{{{RUN}}}))", "step {{step}}")),
        "s", minimum=0), 7, 8)
    lay.add(table(
        "Data-plane steps",
        "Per scale step: the replicas it set and the churn VU's probes (fresh connections through the "
        "path) not answered by a backend pod until the next step. The load's own errors within W of "
        "each step: the Errors near events row and the report's errors by event.",
        targets((f"max by (step) (max_over_time(k6_bench_dataplane_step{{{RUN}}}[$__range]))", ""),
                (f"sum by (step) (max_over_time(k6_bench_dataplane_probe_failures_total{{{RUN}}}[$__range]))", ""),
                instant=True, table=True),
        "short", {"Value #A": "replicas", "Value #B": "probes failed"}, order=["step", "replicas", "probes failed"]),
        7, 8)


def controller_upgrade_row(lay):
    """Controller upgrade: the rollout, pod by pod (controller-upgrade)"""
    lay.row("Controller upgrade: the rollout, pod by pod (controller-upgrade)")
    # one sample per pod and event: its histogram's sum is that time (as for the data-plane steps)
    lay.add(timeseries(
        "Rollout pods: time from the update, as seen",
        "controller-upgrade (scenarios/controller-upgrade.js) rolls the controller's Deployment or "
        "DaemonSet: per pod number, from the update call until the n-th old pod was seen terminating "
        "and the n-th new pod Ready. The update and each of those is also a Scale events entry "
        "(controller_rollout, controller_pod_terminating, controller_pod_ready) and an annotation, so "
        "the errors above line up with them.",
        targets((f"histogram_sum(sum by (event, pod) (k6_bench_upgrade_pod_seconds{{{RUN}}}))", "{{event}} {{pod}}")),
        "s", minimum=0), 10, 8)
    lay.add(table(
        "Rollout pods: from the update",
        "Per pod number, in the order seen: from the rollout's update call until the n-th old pod was "
        "seen terminating and the n-th new pod Ready. The run's summary pairs them as steps.",
        targets((f'histogram_sum(sum by (pod) (k6_bench_upgrade_pod_seconds{{{RUN}, event="terminating"}}))', ""),
                (f'histogram_sum(sum by (pod) (k6_bench_upgrade_pod_seconds{{{RUN}, event="ready"}}))', ""),
                instant=True, table=True),
        "s", {"Value #A": "old pod terminating", "Value #B": "new pod Ready"},
        order=["pod", "old pod terminating", "new pod Ready"]), 8, 8)
    rollout = f"sum(k6_bench_upgrade_rollout_seconds{{{RUN}}})"
    lay.add(stat(
        "Rollout: time to complete",
        "From the update call until the workload's controller saw it, every replica ran the new "
        "template and was available, and every old pod was terminating (the mean if the run rolled "
        "more than once); no value: not complete in time.",
        targets((f"histogram_sum({rollout}) / histogram_count({rollout})", "rollout"), instant=True), "s"), 6, 8)


def backend_failover_row(lay):
    """Backend failover: flaps, time unhealthy (backend-failover)"""
    lay.row("Backend failover: flaps, time unhealthy (backend-failover)")
    flap = "sum by (measure) (k6_bench_failover_flap_seconds{%s})" % RUN
    lay.add(stat(
        "Backend failover: flaps",
        "backend-failover (scenarios/backend-failover.js): one backend pod flaps between healthy and "
        "unhealthy on its own schedule; the flaps the churn VU saw end to end. Each flip is also a "
        "Scale events entry (actions backend_unhealthy, backend_healthy) and an annotation, so the "
        "errors above line up with it.",
        targets((f'histogram_count(sum(k6_bench_failover_flap_seconds{{{RUN}, measure="unhealthy"}}))', "flaps"),
                instant=True), "short", decimals=0), 6, 8)
    # one sample per flap in a runner's cumulative histogram: the mean so far, as for the controller
    # recovery above
    lay.add(timeseries(
        "Backend failover: mean time per flap so far",
        "Per flap of the flapping pod: unhealthy = how long it failed, answering 503 or, in mode close, "
        "closing connections unanswered (the churn VU polls its IP); not_ready = from its first failure "
        "until the API showed it not Ready (mode readiness only). The "
        "run's summary has count, p50 and max; the report has the load's errors per flap.",
        targets((f"histogram_sum({flap}) / histogram_count({flap})", "{{measure}}")),
        "s", minimum=0), 12, 8)
    lay.add(stat(
        "Backend failover: error budget",
        "The gate: at most this many failed load requests in the run (mode readiness: 0; modes errors and close: "
        "errors per flap x the flaps the run can overlap), by mode.",
        targets((f"max by (mode) (k6_bench_failover_budget{{{RUN}}})", "{{mode}}"), instant=True),
        "short", decimals=0), 6, 8)


def long_lived_row(lay):
    """Long-lived streams: held, broken, messages lost (long-lived)"""
    lay.row("Long-lived streams: held, broken, messages lost (long-lived)")
    lay.add(timeseries(
        "Streams broken, by kind and cause",
        "long-lived (scenarios/long-lived.js) holds HTTP streams, WebSockets and gRPC server streams "
        "open through the path while it reloads, scales the stream backend and restarts the controller "
        "(each a Scale events entry and an annotation: reload_route_created, reload_route_deleted, "
        "stream_scale, controller_podkill). A break: a stream ended before its time; cause reset = "
        "broken by the path (the gate allows none), backend_stop = ended cleanly by the stream backend "
        "on its way down. Per interval, stacked.",
        targets((f"sum by (kind, cause) (increase(k6_bench_streams_broken_total{{{RUN}}}[$__rate_interval]))",
                 "{{kind}} {{cause}}")),
        "short", stack=True, bars=True, minimum=0), 12, 8)
    lay.add(timeseries(
        "Stream messages lost",
        "Time slots the stream clients missed (each message carries floor(unix ms / interval), so a "
        "gap within a stream or across a reconnect is counted), per interval and kind.",
        targets((f"sum by (kind) (increase(k6_bench_stream_messages_lost_total{{{RUN}}}[$__rate_interval]))",
                 "{{kind}}")),
        "short", stack=True, bars=True, minimum=0), 6, 8)
    lay.add(table(
        "Streams over range",
        "Per kind, over the dashboard range: streams opened (reconnects included), attempts that could "
        "not open, messages received and lost.",
        targets((f"sum by (kind) (max_over_time(k6_bench_streams_opened_total{{{RUN}}}[$__range]))", ""),
                (f"sum by (kind) (max_over_time(k6_bench_stream_open_errors_total{{{RUN}}}[$__range]))", ""),
                (f"sum by (kind) (max_over_time(k6_bench_stream_messages_total{{{RUN}}}[$__range]))", ""),
                (f"sum by (kind) (max_over_time(k6_bench_stream_messages_lost_total{{{RUN}}}[$__range]))", ""),
                instant=True, table=True),
        "short", {"Value #A": "opened", "Value #B": "open errors", "Value #C": "messages", "Value #D": "lost"},
        order=["kind", "opened", "open errors", "messages", "lost"]), 6, 8)


def routes_row(lay):
    """Routes: propagation, changes, scale (route-* experiments)"""
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


# Event attribution (scenarios/contract.json eventAttribution, as the report's benchreport.timeline):
# the runner's churn actions and the other sources' counters are the events; W is the `window` variable.
ATTRIBUTION = CONTRACT["eventAttribution"]
EVENT_COUNTERS = ["k6_bench_scale_events_total"] + [s["metric"] for s in ATTRIBUTION["sources"]]
WINDOW_DEFAULT = f"{ATTRIBUTION['windowS'] + ATTRIBUTION['pushIntervalS']:g}s"
# 1 at every instant with an event of any source in the W before it: a counter that rose within W.
EVENT_WITHIN_W = " or ".join(f"(sum({m}{{{RUN}}}) - sum({m}{{{RUN}}} offset $window) > 0)" for m in EVENT_COUNTERS)
# 0 while the run is live without an error (k6 creates an error series on its first error)
ERRORS_PER_INTERVAL = zero_while_running("sum(increase(k6_bench_errors_total{%s}[$__rate_interval]))" % LOAD)
# long-lived's stream breaks by the same rule (contract eventAttribution breaks), by cause
BREAKS_METRIC = next(m["prometheus"] for m in CONTRACT["metrics"]["list"] if m["name"] == ATTRIBUTION["breaks"]["metric"])
BREAKS_PER_INTERVAL = (f"sum by ({ATTRIBUTION['breaks']['by']}) "
                       f"(increase({BREAKS_METRIC}{{{RUN}}}[$__rate_interval]))")


def near_event_targets(per_interval, legend=""):
    """per_interval split in two: at instants with an event within W (A) and without (B). In
    parentheses: `and` and `unless` bind tighter than the `or` inside."""
    return targets((f"({per_interval}) and on() ({EVENT_WITHIN_W})", f"{legend}within W of an event"),
                   (f"({per_interval}) unless on() ({EVENT_WITHIN_W})", f"{legend}no event within W"))


def window_variable():
    return textbox_variable(
        "window", "W (attribution window)", WINDOW_DEFAULT,
        "An error counts as near an event when an event came at most this long before it (as make results' "
        f"--attribution-window; default {ATTRIBUTION['windowS']:g} s plus k6's {ATTRIBUTION['pushIntervalS']:g} s push "
        "interval).")


def attribution_row(lay):
    """Errors near events: within W of an event vs. no event nearby"""
    lay.row("Errors near events: within W of an event vs. no event nearby")
    lay.add(timeseries(
        "Errors within W of an event vs. no event nearby",
        "The load's errors per interval, split by whether an event (a churn action, a route change or "
        "creation) came at most $window before: the run overview's view of make results' attribution "
        "section (the report names the event per kind, and the controller's reloads). Stacked.",
        near_event_targets(ERRORS_PER_INTERVAL), "short", stack=True, bars=True, minimum=0), 14, 8)
    lay.add(timeseries(
        "Stream breaks within W of an event vs. no event nearby",
        "long-lived's streams broken per interval, by cause, split the same way (make results' "
        "attribution counts them apart from the errors: a break is a stream, not a request). Stacked; "
        "no data in a run without a break.",
        near_event_targets(BREAKS_PER_INTERVAL, "{{cause}} "), "short", stack=True, bars=True, minimum=0), 10, 8)


def traffic_row(lay):
    """Traffic"""
    lay.row("Traffic")
    lay.add(timeseries(
        "Data sent and received",
        "Bytes per second on the wire as k6 counts them (all runners).",
        targets((k6_rate("k6_data_sent_total"), "sent"), (k6_rate("k6_data_received_total"), "received")),
        "Bps", minimum=0), 24, 7)


ROWS = [load_row, latency_row, errors_row, attribution_row, churn_row, controller_restart_row, dataplane_scale_row,
        controller_upgrade_row, backend_failover_row, long_lived_row, routes_row, traffic_row]


def run_overview():
    lay = Layout()
    for row in ROWS:
        row(lay)

    # The query in `target` (expr, interval), the display keys beside it: where Grafana's Prometheus
    # datasource reads them (it moves a top-level expr/step there itself, for old dashboards).
    scale_annotation = {
        "datasource": DS, "enable": True, "iconColor": "orange", "name": "Scale events",
        "target": {"refId": "Anno", "interval": "10s",
                   "expr": "sum by (action) (increase(k6_bench_scale_events_total{%s}[$__rate_interval])) > 0" % RUN},
        "titleFormat": "{{action}}", "textFormat": "churn: {{action}}",
        "tagKeys": "action", "useValueForTime": False}
    # The warm-up's window: every step at which its requests were being sent, as 1 (Grafana joins
    # consecutive steps of an annotation query with a value of 1 or more into one region; 0 is none).
    warmup_annotation = {
        "datasource": DS, "enable": True, "iconColor": "purple", "name": "Warm-up",
        "target": {"refId": "Warmup", "interval": "5s", "expr": f"{WARMUP_REQS} > bool 0"},
        "titleFormat": "warm-up", "textFormat": "warm-up: at the target rate, left out of every figure",
        "useValueForTime": False}
    return dashboard(
        "bench-run-overview", "bench / run overview",
        "One benchmark run live: offered vs achieved rate, latency percentiles to p99.9999, error "
        "classes, backend replicas and endpoint convergence on one time axis.",
        lay, [datasource_variable(), testid_variable(multi=False), window_variable()],
        annotations=[scale_annotation, warmup_annotation] + event_annotations())


def event_annotations():
    """An annotation per other event source (route changes, creations) and one for the controller's
    reloads (any preset controller's counter, scenarios/contract.json controllerReloads; those series
    carry no testid)."""
    out = [{"datasource": DS, "enable": True, "iconColor": "blue", "name": s["words"].split(" ", 1)[1].capitalize() + "s",
            "target": {"refId": f"Anno-{s['kind']}", "interval": "10s",
                       "expr": f"sum(increase({s['metric']}{{{RUN}}}[$__rate_interval])) > 0"},
            "titleFormat": s["kind"], "textFormat": s["words"], "useValueForTime": False}
           for s in ATTRIBUTION["sources"]]
    reloads = "|".join(r["metric"] for r in CONTRACT["controllerReloads"]["list"])
    out.append({"datasource": DS, "enable": True, "iconColor": "red", "name": "Controller reloads",
                "target": {"refId": "Anno-reloads", "interval": "10s",
                           "expr": f'sum(increase({{__name__=~"{reloads}"}}[$__rate_interval])) > 0'},
                "titleFormat": "controller_reload", "textFormat": "the controller reloaded or pushed its configuration",
                "useValueForTime": False})
    return out

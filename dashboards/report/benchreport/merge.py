"""One merged bench.summary/v1 per run, from the series every k6 runner remote-writes to Prometheus.

k6-operator splits a run over N runner pods (execution segments); each prints its own summary of its
own share, and the pods (and their logs) go away. Every runner also remote-writes cumulative
counters and native histograms tagged with the run id (testid) and its instance_id, so the whole run
can be rebuilt from Prometheus afterwards:
- counts (requests, error classes, dropped iterations, bytes, scale events) are the sum over runners
  of each series' last value: k6's counters start at 0 in each runner, so the last sample is the total;
- percentiles come from histogram_quantile over the SUM of the runners' cumulative native
  histograms at the end of the run (the buckets of one schema add up exactly; percentiles of
  runners are never averaged), so the merged
  p99 is as exact as one bucket: k6 writes schema 3 (bucket factor 1.1 -> 2^(1/8) = 1.0905), about
  9% relative width at any percentile (dashboards/report/README.md, "How exact are merged percentiles");
- the runner verdicts (lag, Go runtime, cgroup CPU throttling) are computed per runner (instance_id),
  with the limits of scenarios/contract.json verdicts.runnerLag.
The run's settings (target rate, duration, connections) are not in these series: results.py reads
them from the tags of the runners' k6_bench_run_info series, and a runner's own summary or the command
line wins over those."""

import math
import time

from . import completeness as whole
from .prometheus import WARMUP, selector
from .summary import CONTRACT, ERROR_CLASSES, PERCENTILES, RATE_HELD_SHARE, RUNNER_LIMITS, SCHEMA

# Samples that arrive a little before the first request sample (setup's zero error series) or
# after it (the last flush): the window reaches this far beyond the run's request samples.
WINDOW_MARGIN_S = 60
# controller-upgrade's pod-template annotation, as the contract's summary schema fixes it
ROLLED_AT = CONTRACT["summarySchema"]["properties"]["controller_upgrade"]["properties"]["annotation"]["const"]


class MergeError(RuntimeError):
    """The run cannot be merged (no series for the run id); the message says what was looked for."""


def lag_limits():
    """{name: number} of the runner verdicts' limits (scenarios/contract.json verdicts.runnerLag)."""
    return dict(RUNNER_LIMITS)


def lag_cpu_bound(p95, p99, limits):
    """The verdict of lag.js lagCpuBound: None without samples."""
    if p95 is None:
        return None
    return p95 > limits["LAG_LIMIT_MS"] or (p99 is not None and p99 > limits["LAG_LIMIT_P99_MS"])


def runtime_bound(sched_p99_ms, gc_cpu, limits):
    """The verdict of lag.js runtimeVerdict: None without the runtime's figures or limits."""
    if sched_p99_ms is None or limits["SCHED_LIMIT_P99_MS"] is None:
        return None
    return sched_p99_ms > limits["SCHED_LIMIT_P99_MS"] or (
        gc_cpu is not None and limits["GC_CPU_LIMIT"] is not None and gc_cpu > limits["GC_CPU_LIMIT"])


def cpu_throttled(ratio, limits):
    """The verdict of lag.js throttleVerdict: None without the cgroup's figure (not read) or limit."""
    if ratio is None or limits["THROTTLED_LIMIT"] is None:
        return None
    return ratio > limits["THROTTLED_LIMIT"]


def _round(v, digits=3):
    if v is None or not math.isfinite(v):
        return None
    return round(v, digits)


def _value(result_entry):
    v = float(result_entry["value"][1])
    return v if math.isfinite(v) else None


def _int(v):
    return int(round(v)) if v is not None else 0


class RunQueries:
    """The run's whole-run totals: each query evaluated once, at the end of the run, over a window
    that holds every sample of the run."""

    def __init__(self, prom, testid, first, last):
        self.prom = prom
        self.testid = testid
        # Just after the last sample: instant selectors see every series' last sample.
        self.at = last + 1
        self.window = f"{int(math.ceil(self.at - first)) + WINDOW_MARGIN_S}s"

    def last(self, metric, sel):
        """last_over_time of every counter series of metric{sel}: each series' total."""
        return f"last_over_time({metric}{sel}[{self.window}])"

    @staticmethod
    def hist(metric, sel):
        """Every native-histogram series of metric{sel} at the end of the run: each one's cumulative
        histogram. Prometheus 2.42 has no last_over_time for native histograms, so this is the plain
        selector, which sees a series whose last sample lies within the 5 min lookback before the
        end; merge_run compares the histogram's count with the request counter to catch the rest."""
        return f"{metric}{sel}"

    def vector(self, query):
        return self.prom.query(query, self.at)

    def scalar(self, query):
        res = self.vector(query)
        return _value(res[0]) if res else None

    def by(self, query, label):
        """{label value: number} of an instant vector (a missing label reads "")."""
        return {r["metric"].get(label, ""): _value(r) for r in self.vector(query)}


def _runner_key(instance_id):
    return instance_id or "untagged"


def bucket_ratio(prom_histogram):
    """upper/lower bound of the first positive bucket of a histogram from the query API, or None."""
    for bucket in prom_histogram.get("buckets") or []:
        lower, upper = float(bucket[1]), float(bucket[2])
        if lower > 0 and upper > lower:
            return upper / lower
    return None


def merge_run(prom, testid, settings, lookback_s, scenario=None, controller=None):
    """The merged bench.summary/v1 dict of run `testid`. settings: the settings object (rate and
    duration_s used for the achieved rate; duration_s None = measured from the samples)."""
    first, last = _span(prom, testid, lookback_s)
    # The runners' end-of-run records, sent after their last push: the run ends at the latest of them.
    records = whole.end_records(prom, testid, time.time(), lookback_s)
    end = whole.run_end(records, last)
    q = RunQueries(prom, testid, first, end)
    # The warm-up's series (role and scenario "warmup") are in no figure: `load` selects role="load",
    # `run` (series without a role: dropped iterations, scale events) leaves scenario="warmup" out.
    load, run, lag = selector(testid, load_only=True), selector(testid, measured=True), selector(testid, role="lag")
    notes = []

    labels = q.vector(f"count by (experiment, controller) ({q.last('k6_http_reqs_total', load)})")
    experiments = sorted({r["metric"].get("experiment", "") for r in labels} - {""})
    controllers = sorted({r["metric"].get("controller", "") for r in labels} - {""})
    counts = _counts(q, load, run, notes)
    completeness, recovered_latency = whole.check(q, testid, records, counts, settings.get("runner_parallelism"),
                                                  first, end)
    # a histogram short of the recovered requests is said by the completeness findings, not as a stale series
    recovered = any(r["status"] == "recovered" for r in completeness["runners"])
    latency, latency_count, ratio = _latency(q, load, counts["total"], [] if recovered else notes)
    if recovered_latency:
        latency = recovered_latency
    notes += completeness["notes"]
    limits = lag_limits()
    duration_s = _duration(settings, first, last, notes)
    runners = _runners(q, load, lag, limits, counts, settings.get("rate"), duration_s, notes)
    for r in runners:
        took = next((c for c in completeness["runners"] if c["instance_id"] == r["instance_id"]
                     and c["status"] == "recovered"), None)
        if took:
            r["latency_ms"] = {"p50": took["latency_ms"]["p50"], "p99": took["latency_ms"]["p99"]}
    by_path, steps, calibration = merge_parts(q, load, run, lag, limits, len(runners))
    if len(experiments) > 1 or len(controllers) > 1:
        notes.append(f"run id {testid} carries several experiments {experiments} or controllers "
                     f"{controllers}: the series of more than one run are mixed")
    total, rate, received, dropped = counts["total"], settings.get("rate"), counts["received"], counts["dropped"]
    summary = {
        "schema": SCHEMA,
        "testid": testid,
        "scenario": scenario or (experiments[0] if experiments else None),
        "controller": controller or (controllers[0] if controllers else None),
        # the whole run: every runner's share (a runner's own summary has its runner_share)
        "settings": dict(settings, duration_s=duration_s, runner_share=1),
        "requests": {
            "total": total,
            "rate_target": rate,
            "rate_achieved": _round(total / duration_s, 1) if duration_s else None,
            "dropped_iterations": dropped,
        },
        "latency_ms": latency,
        "errors": counts["errors"],
        "error_causes": counts["error_causes"],
        "convergence_ms": _convergence(q, run),
        "scale_events": sum(r["scale_events"] for r in runners),
        "by_path": by_path,
        "throughput": {
            "bytes_received": received,
            "bytes_received_per_s": _round(received / duration_s, 0) if duration_s else None,
        },
        "runner": _worst_runner(runners, limits),
        "runners": runners,
        "merge": _merge_record(prom.url, runners, first, last, latency_count, ratio, notes),
        # what the summary still lacks after the end-of-run records (null: nothing)
        "incomplete": whole.incomplete_of(completeness),
    }
    summary["merge"]["completeness"] = {k: v for k, v in completeness.items() if k != "notes"}
    _add_optional(summary, q, settings, counts, steps, calibration, run)
    return summary


def _span(prom, testid, lookback_s):
    """(first, last) sample time of the run's request counter, or a MergeError naming the run ids
    Prometheus does hold."""
    span = prom.locate_run(testid, lookback_s)
    if span is None:
        known = prom.testids(lookback_s)
        raise MergeError(f"Prometheus at {prom.url} has no k6_http_reqs_total series with testid={testid} "
                         f"in the last {lookback_s / 3600:g} h; run ids it has: "
                         f"{', '.join(known[-20:]) if known else 'none'}")
    return span


def _duration(settings, first, last, notes):
    """The run's load duration: the settings', else measured between the first and last samples."""
    duration_s = settings.get("duration_s")
    if not duration_s:
        duration_s = _round(last - first, 1)
        notes.append(f"duration not given: {duration_s} s measured between the first and last request "
                     "samples (off by up to one remote-write push interval, 5 s by default)")
    return duration_s


def _merge_record(url, runners, first, last, latency_count, ratio, notes):
    """The summary's merge object: where the figures came from and how exact its percentiles are."""
    return {
        "source": "prometheus",
        "prometheus": url,
        "runners": len(runners),
        "churn_runners": ",".join(r["instance_id"] for r in runners if r["scale_events"]) or None,
        "first_sample_unix": _round(first, 3),
        "last_sample_unix": _round(last, 3),
        "latency_histogram_count": latency_count,
        "histogram_bucket_ratio": _round(ratio, 5),
        "percentile_max_error_pct": _round((ratio - 1) * 100, 2) if ratio else None,
        "notes": notes,
    }


def _add_optional(summary, q, settings, counts, steps, calibration, run):
    """The parts a summary has only for some runs: the warm-up's requests, why iterations were
    dropped, the max-rps steps, the calibration, the controller-restart, dataplane-scale and
    controller-upgrade sections."""
    testid, dropped = summary["testid"], counts["dropped"]
    # as the runner's summary: how many requests the warm-up sent, left out of every figure above
    warmup_requests = _int(q.scalar(f"sum({q.last('k6_http_reqs_total', selector(testid, role=WARMUP['role']))})"))
    if warmup_requests or settings.get("warmup_s"):
        summary["requests"]["warmup_requests"] = warmup_requests
    rn = summary["runner"]
    # as scenarios/lib/summary-writer.js droppedBecause: whose limit it was, when k6 dropped iterations
    summary["requests"]["dropped_because"] = (
        None if not dropped else "runner" if rn["cpu_bound"] or rn["runtime_bound"] or rn["cpu_throttled"] else "target")
    if steps is not None:
        summary["max_rps"] = steps
    if calibration is not None:
        summary["calibrate"] = calibration
    if summary["scenario"] == "controller-restart":
        summary["controller_restart"] = _controller_restart(q, run, counts["errors"])
    if summary["scenario"] == "dataplane-scale":
        summary["dataplane_scale"] = _dataplane_scale(q, run, counts["errors"])
    if summary["scenario"] == "controller-upgrade":
        summary["controller_upgrade"] = _controller_upgrade(q, run, counts["errors"])
    if summary["scenario"] == "backend-failover":
        summary["backend_failover"] = _backend_failover(q, run, counts["errors"])
    if summary["scenario"] == "long-lived":
        summary["long_lived"] = _long_lived(q, run, counts["errors"])


def _counts(q, load, run, notes):
    """The run's counters (each series' last value, summed): requests, dropped iterations, bytes,
    errors by class and cause, and the same per runner (instance_id)."""
    c = {
        "total": _int(q.scalar(f"sum({q.last('k6_http_reqs_total', load)})")),
        "per_runner_requests": q.by(f"sum by (instance_id) ({q.last('k6_http_reqs_total', load)})", "instance_id"),
        "dropped": _int(q.scalar(f"sum({q.last('k6_dropped_iterations_total', run)})")),
        "per_runner_dropped": q.by(f"sum by (instance_id) ({q.last('k6_dropped_iterations_total', run)})",
                                   "instance_id"),
        "received": _int(q.scalar(f"sum({q.last('k6_data_received_total', load)})")),
        "per_runner_received": q.by(f"sum by (instance_id) ({q.last('k6_data_received_total', load)})", "instance_id"),
        "scale_events": q.by(f"sum by (instance_id) ({q.last('k6_bench_scale_events_total', run)})", "instance_id"),
    }
    errors_by_class = q.by(f"sum by (class) ({q.last('k6_bench_errors_total', load)})", "class")
    unknown = sorted(set(errors_by_class) - set(ERROR_CLASSES))
    if unknown:
        notes.append(f"error classes not in bench.summary/v1 left out: {', '.join(unknown)}")
    c["errors"] = {cls: _int(errors_by_class.get(cls)) for cls in ERROR_CLASSES}
    # Every class/cause pair the run has a series for (each starts at 0 in setup, without a role),
    # counted over the load only, like the summary of one runner.
    error_causes = {}
    for r in q.vector(f"count by (class, cause) ({q.last('k6_bench_errors_total', run)})"):
        cls, cause = r["metric"].get("class", ""), r["metric"].get("cause", "")
        if cls in ERROR_CLASSES and cause:
            error_causes.setdefault(cls, {})[cause] = 0
    for r in q.vector(f"sum by (class, cause) ({q.last('k6_bench_errors_total', load)})"):
        cls, cause = r["metric"].get("class", ""), r["metric"].get("cause", "")
        if cls in ERROR_CLASSES and cause:
            error_causes.setdefault(cls, {})[cause] = _int(_value(r))
    c["error_causes"] = error_causes
    per_runner_errors = {}
    for r in q.vector(f"sum by (instance_id, class) ({q.last('k6_bench_errors_total', load)})"):
        per_runner_errors.setdefault(r["metric"].get("instance_id", ""), {})[r["metric"].get("class", "")] = _int(_value(r))
    c["per_runner_errors"] = per_runner_errors
    per_runner_causes = {}
    for r in q.vector(f"sum by (instance_id, class, cause) ({q.last('k6_bench_errors_total', load)})"):
        m = r["metric"]
        per_runner_causes.setdefault(m.get("instance_id", ""), {}).setdefault(m.get("class", ""), {})[
            m.get("cause", "")] = _int(_value(r))
    c["per_runner_causes"] = per_runner_causes
    return c


def _latency(q, load, total, notes):
    """Latency: one histogram, the sum of every runner's (and every label set's) cumulative
    histogram. (latency_ms, the histogram's count, its bucket ratio)."""
    hist = f"sum({q.hist('k6_http_req_duration_seconds', load)})"
    latency, latency_count = latency_of(q, hist)
    ratio = None
    if latency_count:
        raw = q.vector(hist)
        ratio = bucket_ratio(raw[0]["histogram"][1]) if raw and "histogram" in raw[0] else None
    elif total:
        notes.append("no native-histogram latency series (k6_http_req_duration_seconds): runners need "
                     "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true and Prometheus "
                     "--enable-feature=native-histograms; latency left null")
    if latency_count and abs(latency_count - total) > 0.01 * max(total, 1):
        notes.append(f"the latency histogram counts {latency_count} requests, the request counter {total}: "
                     "series whose last sample is more than 5 min older than the run's end are not in "
                     "the percentiles (Prometheus 2.42 has no last_over_time for native histograms)")
    return latency, latency_count, ratio


def _count_p50_max(q, metric, sel):
    """{count, p50, max} in ms of a native-histogram time trend (max: its highest bucket's bound)."""
    h = f"sum({q.hist(metric, sel)})"
    n = _int(q.scalar(f"histogram_count({h})"))
    out = {"count": n, "p50": None, "max": None}
    if n:
        out["p50"] = _round(_ms(q.scalar(f"histogram_quantile(0.5, {h})")), 1)
        out["max"] = _round(_ms(q.scalar(f"histogram_quantile(1, {h})")), 1)
    return out


def _convergence(q, run):
    return {event: _count_p50_max(q, "k6_bench_endpoint_convergence_seconds", selector_with(run, event=event))
            for event in ("added", "removed")}


def _controller_restart(q, run, errors):
    """controller-restart's section (scenarios/lib/summary-writer.js controllerRestartFor) from the
    series: deletions, the replaced/recovered trends, the load's errors. Namespace and selector are
    not in Prometheus: null."""
    deleted = _int(q.scalar(f"sum({q.last('k6_bench_scale_events_total', selector_with(run, action='controller_podkill'))})"))
    replaced, recovered = (_count_p50_max(q, "k6_bench_controller_recovery_seconds", selector_with(run, measure=m))
                           for m in ("replaced", "recovered"))
    lost = sum(errors.values())
    return {"namespace": None, "selector": None, "pods_deleted": deleted,
            "unrecovered": max(0, deleted - recovered["count"]), "replaced_ms": replaced, "recovered_ms": recovered,
            "requests_lost": lost, "gate": {"max_errors": 0, "passed": lost == 0}}


def _dataplane_scale(q, run, errors):
    """dataplane-scale's section (scenarios/lib/summary-writer.js dataplaneScaleFor) from the series:
    per step (label step) the replicas it set, its one time to Ready (the histogram's sum: one sample
    per step) and the failed probes; the load's errors. Namespace, Deployment, the object scaled, mode
    and levels are not in Prometheus: null (so levels_reached is too)."""
    to = q.by(f"max by (step) ({q.last('k6_bench_dataplane_step', run)})", "step")
    ready_s = q.by(f"histogram_sum(sum by (step) ({q.hist('k6_bench_dataplane_ready_seconds', run)}))", "step")
    failed = q.by(f"sum by (step) ({q.last('k6_bench_dataplane_probe_failures_total', run)})", "step")
    start = q.scalar(f"max({q.last('k6_bench_dataplane_replicas', selector_with(run, state='start'))})")
    start = _int(start) if start is not None else None
    steps, before = [], start
    for step in sorted((s for s in to if s.isdigit()), key=int):
        ready = ready_s.get(step)
        steps.append({"step": int(step), "from": before, "to": _int(to[step]),
                      "ready_ms": None if ready is None else _round(_ms(ready), 1), "probe_failures": _int(failed.get(step))})
        before = steps[-1]["to"]
    times = sorted(s["ready_ms"] for s in steps if s["ready_ms"] is not None)
    lost = sum(errors.values())
    return {"namespace": None, "deployment": None, "scaled": None, "mode": None, "levels": None,
            "start_replicas": start, "levels_reached": None, "steps": steps,
            "unready": sum(1 for s in steps if s["ready_ms"] is None),
            # the median of the step times, as k6's p(50) of the runner's trend
            "ready_ms": {"count": len(times), "p50": _median(times), "max": times[-1] if times else None},
            "requests_lost": lost, "gate": {"max_errors": 0, "passed": lost == 0}}


def _controller_upgrade(q, run, errors):
    """controller-upgrade's section (scenarios/lib/summary-writer.js controllerUpgradeFor) from the
    series: per pod number (label pod) its one time of each event (the histogram's sum: one sample
    each), the rollout's time (the mean of the rollouts: the one rollout's time in a run of one), the
    events' counts, the load's errors. What changed (kind, name, images) is not in Prometheus: null."""
    def events(action):
        return _int(q.scalar(f"sum({q.last('k6_bench_scale_events_total', selector_with(run, action=action))})"))
    def per_pod(event):
        h = q.hist("k6_bench_upgrade_pod_seconds", selector_with(run, event=event))
        return q.by(f"histogram_sum(sum by (pod) ({h}))", "pod")
    times = {event: per_pod(event) for event in ("terminating", "ready")}
    pods = sorted({p for t in times.values() for p in t if p.isdigit()}, key=int)
    at = (lambda event, pod: None if times[event].get(pod) is None else _round(_ms(times[event][pod]), 1))
    rollout = f"sum({q.hist('k6_bench_upgrade_rollout_seconds', run)})"
    complete = _int(q.scalar(f"histogram_count({rollout})"))
    rollout_s = q.scalar(f"histogram_sum({rollout})") if complete else None
    rollouts, lost = events("controller_rollout"), sum(errors.values())
    return {"kind": None, "namespace": None, "name": None, "container": None, "image_from": None, "image_to": None,
            "annotation": ROLLED_AT, "at_end": None, "rollouts": rollouts,
            "incomplete": max(0, rollouts - complete),
            "rollout_ms": None if rollout_s is None else _round(_ms(rollout_s / complete), 1),
            "pods_terminating": events("controller_pod_terminating"), "pods_ready": events("controller_pod_ready"),
            "steps": [{"step": int(p), "old_terminating_ms": at("terminating", p), "new_ready_ms": at("ready", p)}
                      for p in pods],
            "requests_lost": lost, "gate": {"max_errors": 0, "passed": lost == 0}}


def _backend_failover(q, run, errors):
    """backend-failover's section (scenarios/lib/summary-writer.js backendFailoverFor) from the series:
    the flips (events), the per-flap trends, the load's errors, the gate's budget and mode (the
    bench_failover_budget gauge and its label). The schedule and the budget per flap are not in
    Prometheus: null."""
    def events(action):
        return _int(q.scalar(f"sum({q.last('k6_bench_scale_events_total', selector_with(run, action=action))})"))
    flaps = events("backend_unhealthy")
    budget = q.by(f"max by (mode) ({q.last('k6_bench_failover_budget', run)})", "mode")
    mode = next(iter(budget), None)
    max_errors = _int(budget[mode]) if mode is not None else 0
    lost = sum(errors.values())
    return {"mode": mode, "unhealthy_ms_set": None, "healthy_ms_set": None, "flaps": flaps,
            "recovered": events("backend_healthy"),
            "unhealthy_ms": _count_p50_max(q, "k6_bench_failover_flap_seconds", selector_with(run, measure="unhealthy")),
            "not_ready_ms": _count_p50_max(q, "k6_bench_failover_flap_seconds", selector_with(run, measure="not_ready")),
            "requests_lost": lost, "errors_per_flap": _round(lost / flaps, 1) if flaps else None,
            "gate": {"max_errors": max_errors, "errors_per_flap": None, "passed": lost <= max_errors}}


# long-lived's kinds of stream and causes of a break (scenarios/lib/long-lived-summary.js)
STREAM_KINDS, STREAM_CAUSES = ("http", "websocket", "grpc"), ("backend_stop", "reset")


def _long_lived(q, run, errors):
    """long-lived's section (scenarios/lib/long-lived-summary.js section) from the series: per kind
    that opened a stream or tried, its counters and break times; the load's errors; the gate. The
    settings are not in Prometheus: null (kinds: those with series)."""
    def total(metric, **labels):
        return _int(q.scalar(f"sum({q.last(metric, selector_with(run, **labels))})"))
    by_kind = {}
    for kind in STREAM_KINDS:
        entry = {"opened": total("k6_bench_streams_opened_total", kind=kind),
                 "broken": {c: total("k6_bench_streams_broken_total", kind=kind, cause=c) for c in STREAM_CAUSES},
                 "open_errors": total("k6_bench_stream_open_errors_total", kind=kind),
                 "messages": total("k6_bench_stream_messages_total", kind=kind),
                 "messages_lost": total("k6_bench_stream_messages_lost_total", kind=kind),
                 "broken_after_ms": _count_p50_max(q, "k6_bench_stream_broken_after_seconds", selector_with(run, kind=kind))}
        if entry["opened"] or entry["open_errors"]:
            by_kind[kind] = entry
    sums = {k: sum(e[k] for e in by_kind.values()) for k in ("open_errors", "messages", "messages_lost")}
    backend = sum(e["broken"]["backend_stop"] for e in by_kind.values())
    path = sum(e["broken"]["reset"] for e in by_kind.values())
    lost = sum(errors.values())
    return {"kinds": list(by_kind), "streams_per_kind": None, "interval_ms": None, "disruptions": None, "hold_ms": None,
            "by_kind": by_kind, "broken": backend + path, "broken_by_backend": backend, "broken_by_path": path, **sums,
            "requests_lost": lost, "gate": {"max_broken_by_path": 0, "max_errors": 0, "passed": path == 0 and lost == 0}}


def _median(sorted_values):
    """The median of a sorted list (None when empty), the mean of the two middle values for an even count."""
    n = len(sorted_values)
    if not n:
        return None
    mid = n // 2
    return sorted_values[mid] if n % 2 else _round((sorted_values[mid - 1] + sorted_values[mid]) / 2, 1)


def _runners(q, load, lag, limits, counts, rate, duration_s, notes):
    """One entry per runner (instance_id): its counts, p50/p99 and the lag, Go-runtime and cgroup
    verdicts, with the limits of scenarios/contract.json verdicts.runnerLag."""
    per_runner_latency = {}
    for p in ("p50", "p99"):
        by_runner = q.by(f"histogram_quantile({float(p[1:]) / 100!r}, sum by (instance_id) "
                         f"({q.hist('k6_http_req_duration_seconds', load)}))", "instance_id")
        for iid, v in by_runner.items():
            per_runner_latency.setdefault(iid, {})[p] = _round(_ms(v))
    lag_hist = f"sum by (instance_id) ({q.hist('k6_bench_runner_lag_seconds', lag)})"
    lag_by = {iid: {"count": _int(v)} for iid, v in q.by(f"histogram_count({lag_hist})", "instance_id").items()}
    for key, quantile in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("max", 1)):
        for iid, v in q.by(f"histogram_quantile({quantile!r}, {lag_hist})", "instance_id").items():
            lag_by.setdefault(iid, {"count": 0})[key] = _round(_ms(v), 1)
    # The Go runtime's witnesses: gauges since the runner started, so each one's last value.
    sched_by = q.by(f"max by (instance_id) ({q.last('k6_bench_runner_sched_p99_ms', lag)})", "instance_id")
    gc_by = q.by(f"max by (instance_id) ({q.last('k6_bench_runner_gc_cpu_ratio', lag)})", "instance_id")
    # The cgroup's witness: a gauge since the load began (no series where the cgroup was not read).
    throttled_by = q.by(f"max by (instance_id) ({q.last('k6_bench_runner_cpu_throttled_ratio', lag)})", "instance_id")

    instance_ids = sorted(set(counts["per_runner_requests"]) | set(counts["per_runner_dropped"])
                          | set(counts["per_runner_errors"]) | set(counts["scale_events"]) | set(lag_by),
                          key=_instance_order)
    runners = []
    for iid in instance_ids:
        lag_ms = {k: None for k in ("p50", "p95", "p99", "max")}
        lag_ms["count"] = 0
        lag_ms.update(lag_by.get(iid, {}))
        n = _int(counts["per_runner_requests"].get(iid))
        runners.append({
            "instance_id": _runner_key(iid),
            "requests": n,
            # k6-operator splits the rate evenly (execution segments 0:1/N, 1/N:2/N, ...).
            "rate_target": _round(rate / len(instance_ids), 1) if rate else None,  # len >= 1 here
            "rate_achieved": _round(n / duration_s, 1) if duration_s else None,
            "dropped_iterations": _int(counts["per_runner_dropped"].get(iid)),
            "errors": {c: counts["per_runner_errors"].get(iid, {}).get(c, 0) for c in ERROR_CLASSES},
            "latency_ms": per_runner_latency.get(iid, {"p50": None, "p99": None}),
            "scale_events": _int(counts["scale_events"].get(iid)),
            "lag_ms": {k: lag_ms[k] for k in ("count", "p50", "p95", "p99", "max")},
            "cpu_bound": lag_cpu_bound(lag_ms["p95"], lag_ms["p99"], limits),
            "sched_p99_ms": _round(sched_by.get(iid)),
            "gc_cpu_fraction": _round(gc_by.get(iid), 4),
            "runtime_bound": runtime_bound(_round(sched_by.get(iid)), _round(gc_by.get(iid), 4), limits),
            "cpu_throttled_ratio": _round(throttled_by.get(iid), 4),
            "cpu_throttled": cpu_throttled(_round(throttled_by.get(iid), 4), limits),
        })
    if any(r["cpu_bound"] is None for r in runners):
        notes.append("no runner-lag samples from runner(s) "
                     + ", ".join(r["instance_id"] for r in runners if r["cpu_bound"] is None))
    return runners


def _worst_runner(runners, limits):
    """The summary's `runner`: the worst runner's lag, runtime and throttle figures; each verdict true
    if any runner's was (null when no runner had the figure)."""
    sampled = [r for r in runners if r["cpu_bound"] is not None]
    runtime_sampled = [r for r in runners if r["runtime_bound"] is not None]
    throttle_read = [r for r in runners if r["cpu_throttled"] is not None]
    worst = max(sampled, key=lambda r: (r["cpu_bound"], r["lag_ms"]["p95"] or 0), default=None)
    return {
        "lag_ms": dict(worst["lag_ms"]) if worst else {"count": 0, "p50": None, "p95": None, "p99": None, "max": None},
        "lag_limit_ms": limits["LAG_LIMIT_MS"],
        "lag_limit_p99_ms": limits["LAG_LIMIT_P99_MS"],
        "cpu_bound": any(r["cpu_bound"] for r in sampled) if sampled else None,
        # the worst runner's runtime figures; runtime_bound if any runner was
        "sched_latency_ms": {"p99": max((r["sched_p99_ms"] for r in runtime_sampled), default=None)},
        "sched_limit_p99_ms": limits["SCHED_LIMIT_P99_MS"],
        "gc_cpu_fraction": max((r["gc_cpu_fraction"] for r in runtime_sampled
                                if r["gc_cpu_fraction"] is not None), default=None),
        "gc_cpu_limit": limits["GC_CPU_LIMIT"],
        "runtime_bound": any(r["runtime_bound"] for r in runtime_sampled) if runtime_sampled else None,
        # the most throttled runner's share; cpu_throttled if any runner was, unknown if none was read
        "cgroup_cpu": {"throttled_ratio": max((r["cpu_throttled_ratio"] for r in throttle_read), default=None)},
        "cpu_throttled_limit": limits["THROTTLED_LIMIT"],
        "cpu_throttled": any(r["cpu_throttled"] for r in throttle_read) if throttle_read else None,
    }


def latency_of(q, hist):
    """({min, avg, max, percentiles...} in ms or nulls, request count) of a histogram expression."""
    latency = {"min": None, "avg": None, "max": None}
    latency.update({p: None for p in PERCENTILES})
    count = _int(q.scalar(f"histogram_count({hist})"))
    if count:
        latency_sum = q.scalar(f"histogram_sum({hist})")
        latency["avg"] = _round(1000 * latency_sum / count) if latency_sum is not None else None
        for p in PERCENTILES:
            latency[p] = _round(_ms(q.scalar(f"histogram_quantile({float(p[1:]) / 100!r}, {hist})")))
        latency["min"] = _round(_ms(q.scalar(f"histogram_quantile(0, {hist})")))
        latency["max"] = _round(_ms(q.scalar(f"histogram_quantile(1, {hist})")))
    return latency, count


# The tags scenarios/lib/load.js baseOptions puts on each part's and step's k6 scenario.
PART_LABELS = ("scenario", "part", "part_kind", "part_rate", "part_ms", "budget_p99_ms", "budget_error_ratio")


def merge_parts(q, load, run, lag, limits, runner_count):
    """(by_path, max_rps or None, calibrate or None) of the whole run: each part and step summed over
    the runners from its k6 scenario's series, with the rate and length its tags name. Steps with a
    budget (max-rps) are judged as scenarios/lib/knee.js judgeStep does, on the whole step: no dropped
    iterations, >= 95% of the rate, p99 and the failed-request ratio within the budget; the knee is
    the highest. Steps without one (calibrate) are judged as judgeRunnerStep does, on the whole step:
    no dropped iterations, >= 95% of the rate, and no runner CPU-bound by its own lag in that step;
    the ceiling is the highest held, the rate all the runners together sent."""
    tagged = load[:-1] + ', part!=""}'
    parts = q.vector(f"count by ({', '.join(PART_LABELS)}) ({q.last('k6_http_reqs_total', tagged)})")
    by_path, steps, budget, runner_steps = {}, [], None, []
    for r in sorted(parts, key=lambda r: r["metric"].get("scenario", "")):
        m = r["metric"]
        sel = selector_with(load, scenario=m.get("scenario", ""))
        # k6 tags dropped_iterations with the run's tags and the scenario's name only, not the
        # scenario's own tags (role, part...): selected by name, or every step would read 0.
        dropped_sel = selector_with(run, scenario=m.get("scenario", ""))
        rate, duration_s = _number(m.get("part_rate")), _number(m.get("part_ms")) / 1000
        if not (math.isfinite(rate) and duration_s > 0):
            continue  # not tagged by baseOptions: nothing to judge it against
        total = _int(q.scalar(f"sum({q.last('k6_http_reqs_total', sel)})"))
        by_class = q.by(f"sum by (class) ({q.last('k6_bench_errors_total', sel)})", "class")
        errors = {c: _int(by_class.get(c)) for c in ERROR_CLASSES}
        latency, _ = latency_of(q, f"sum({q.hist('k6_http_req_duration_seconds', sel)})")
        requests = {
            "total": total,
            "rate_target": rate,
            "rate_achieved": _round(total / duration_s, 1),
            "dropped_iterations": _int(q.scalar(f"sum({q.last('k6_dropped_iterations_total', dropped_sel)})")),
        }
        if m.get("part_kind") == "path":
            by_path[m.get("part", "")] = {"requests": requests, "latency_ms": latency, "errors": errors}
        elif m.get("part_kind") == "step" and m.get("budget_p99_ms"):
            budget = {"p99_ms": _number(m["budget_p99_ms"]), "error_ratio": _number(m.get("budget_error_ratio"))}
            failed = sum(errors.values())
            error_ratio = failed / total if total else 1
            steps.append({
                "rate_target": requests["rate_target"],
                "rate_target_run": requests["rate_target"],
                "rate_achieved": requests["rate_achieved"],
                "p99_ms": latency["p99"],
                "error_ratio": round(error_ratio, 6),
                "dropped_iterations": requests["dropped_iterations"],
                "ok": bool(total > 0 and requests["dropped_iterations"] == 0
                           and requests["rate_achieved"] >= RATE_HELD_SHARE * requests["rate_target"]
                           and latency["p99"] is not None and latency["p99"] <= budget["p99_ms"]
                           and error_ratio <= budget["error_ratio"]),
            })
        elif m.get("part_kind") == "step":
            runner_steps.append(judge_runner_step(q, lag, limits, m.get("scenario", ""), requests, latency))
    max_rps = None
    if steps:
        steps.sort(key=lambda j: j["rate_target"])
        held = [j["rate_target"] for j in steps if j["ok"]]
        max_rps = {"budget": budget, "knee_rate": max(held) if held else None, "steps": steps}
    return by_path, max_rps, calibration_of(runner_steps, limits, runner_count)


def judge_runner_step(q, lag, limits, scenario, requests, latency):
    """One calibrate step of the whole run (scenarios/lib/knee.js judgeRunnerStep on every runner at
    once): held when nothing was dropped, >= 95% of the step's rate was sent, and no runner's lag
    samples of that step (tag step=<scenario>) say it was CPU-bound. lag_p95_ms/lag_p99_ms are the
    worst runner's; cpu_bound_runners names the runners that were."""
    hist = f"sum by (instance_id) ({q.hist('k6_bench_runner_lag_seconds', selector_with(lag, step=scenario))})"
    p95 = {iid: _round(_ms(v), 1) for iid, v in q.by(f"histogram_quantile(0.95, {hist})", "instance_id").items()}
    p99 = {iid: _round(_ms(v), 1) for iid, v in q.by(f"histogram_quantile(0.99, {hist})", "instance_id").items()}
    bound = sorted((iid for iid in p95 if lag_cpu_bound(p95[iid], p99.get(iid), limits)), key=_instance_order)
    ok = bool(requests["total"] > 0 and requests["dropped_iterations"] == 0
              and requests["rate_achieved"] >= RATE_HELD_SHARE * requests["rate_target"] and not bound)
    return {
        "rate_target": requests["rate_target"],
        "rate_target_run": requests["rate_target"],
        "rate_achieved": requests["rate_achieved"],
        "p99_ms": latency["p99"],
        "dropped_iterations": requests["dropped_iterations"],
        "lag_p95_ms": max((v for v in p95.values() if v is not None), default=None),
        "lag_p99_ms": max((v for v in p99.values() if v is not None), default=None),
        "cpu_bound": bool(bound),
        "cpu_bound_runners": [_runner_key(iid) for iid in bound],
        "ok": ok,
    }


def calibration_of(judged, limits, runner_count):
    """The merged calibrate result (calibrate.js's keys), or None without calibrate steps: the
    ceiling is the highest whole step held, by runner_count runners together (ceiling_rate_per_runner:
    its even share, what sizing divides by); limited_by what broke the first failed step above it
    (knee.js limitedBy)."""
    if not judged:
        return None
    judged.sort(key=lambda j: j["rate_target"])
    held = [j["rate_target"] for j in judged if j["ok"]]
    ceiling = max(held) if held else None
    first = next((j for j in judged if not j["ok"] and (ceiling is None or j["rate_target"] > ceiling)), None)
    return {
        "lag_limit_ms": limits["LAG_LIMIT_MS"],
        "lag_limit_p99_ms": limits["LAG_LIMIT_P99_MS"],
        "ceiling_rate": ceiling,
        "runners": runner_count,
        "ceiling_rate_per_runner": _round(ceiling / runner_count, 1) if ceiling is not None and runner_count else None,
        "max_achieved_rate": max(j["rate_achieved"] for j in judged),
        "limited_by": None if first is None else "runner-cpu" if first["cpu_bound"] else "connections-or-target",
        "steps": judged,
    }


def _number(text):
    """A number a scenario tag carries ("400", "0.001") as the runner's summary writes it: an int
    when whole; NaN when the tag is missing."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return math.nan
    return int(v) if v.is_integer() else v


def selector_with(sel, **labels):
    """sel ('{testid="x"}') with more equality matchers."""
    extra = ", ".join(f'{k}="{v}"' for k, v in labels.items())
    return sel[:-1] + ", " + extra + "}"


def _ms(seconds):
    return None if seconds is None else 1000.0 * seconds


def _instance_order(iid):
    return (0, int(iid), "") if iid.isdigit() else (1, 0, iid)

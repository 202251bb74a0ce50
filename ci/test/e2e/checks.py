"""Checks applied to more than one run (the benchmark and the Gateway run): each returns the list of
what is wrong, empty when the run passes, so a case asserts it and shows every finding at once."""
import re

from cluster_lib import CONTRACT


def summary_inconsistencies(summary):
    """The numbers agree with each other (the summary always writes every key, so their presence
    proves nothing): percentiles are numbers ascending from min to max, each error class is the sum
    of its causes (counted by separate tagged series), the same classes in both and in the
    contract, no more failures than requests, and requests were made."""
    wrong = []
    keys = [p["key"] for p in CONTRACT["percentiles"]["list"]]
    lat = summary["latency_ms"]
    points = [("min", lat.get("min"))] + [(k, lat.get(k)) for k in keys] + [("max", lat.get("max"))]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for _, v in points):
        wrong.append(f"latency_ms not all numbers: {points}")
    else:
        for (k0, v0), (k1, v1) in zip(points, points[1:]):
            if v0 > v1:
                wrong.append(f"latency_ms.{k0} {v0} > {k1} {v1}")
    total = summary["requests"]["total"]
    if not total > 0:
        wrong.append(f"requests.total {total}")
    errors, causes = summary["errors"], summary["error_causes"]
    for cls, n in errors.items():
        by_cause = sum(causes.get(cls, {}).values())
        if n != by_cause:
            wrong.append(f"errors.{cls} {n} != sum of its causes {by_cause} ({causes.get(cls)})")
    if sorted(errors) != sorted(causes):
        wrong.append(f"error classes {sorted(errors)} but causes for {sorted(causes)}")
    if sorted(errors) != sorted(CONTRACT["errorClasses"]["causes"]):
        wrong.append(f"error classes {sorted(errors)}, the contract's {sorted(CONTRACT['errorClasses']['causes'])}")
    if sum(errors.values()) > total:
        wrong.append(f"{sum(errors.values())} errors > {total} requests")
    return wrong


def prometheus_series_missing(kube, testid, at):
    """Every series the run must have left in Prometheus, each with a value > 0 at `at`."""
    t = f'testid="{testid}"'
    classes = len(CONTRACT["errorClasses"]["causes"])
    causes = sum(len(c) for c in CONTRACT["errorClasses"]["causes"].values())
    wanted = [
        ("requests", f"sum(k6_http_reqs_total{{{t}}})"),
        # the experiment tag through the TestRun's real command line (its --tag flags replace the
        # script's run tags): every request series carries it
        ("request series without experiment=dynamic (want none: 1 means 0)",
         f'(count(k6_http_reqs_total{{{t}, experiment!="dynamic"}}) or vector(0)) == bool 0'),
        ("requests tagged experiment=dynamic", f'sum(k6_http_reqs_total{{{t}, experiment="dynamic"}})'),
        ("latency native histogram count", f"histogram_count(sum(k6_http_req_duration_seconds{{{t}}}))"),
        ("latency p99 (s)", f"histogram_quantile(0.99, sum(k6_http_req_duration_seconds{{{t}}}))"),
        # every class and every cause under it has a series (started at 0 in setup) whether or not
        # this run saw it; the classes and causes are the contract's
        (f"error classes with a series (want {classes})",
         f"count(count by (class) (k6_bench_errors_total{{{t}}})) == {classes}"),
        (f"error causes with a series (want {causes})",
         f"count(count by (class, cause) (k6_bench_errors_total{{{t}}})) == {causes}"),
        # the runner's Go runtime figures (k6/x/bench)
        ("runner scheduling p99 gauge", f"count(k6_bench_runner_sched_p99_ms{{{t}}})"),
        ("runner GC CPU gauge", f"count(k6_bench_runner_gc_cpu_ratio{{{t}}}) + 1"),
        ("max desired replicas", f"max(max_over_time(k6_bench_replicas_desired{{{t}}}[10m]))"),
        ("max ready replicas", f"max(max_over_time(k6_bench_replicas_ready{{{t}}}[10m]))"),
        ("scale events", f"sum(k6_bench_scale_events_total{{{t}}})"),
        ("endpoint convergence samples", f"histogram_count(sum(k6_bench_endpoint_convergence_seconds{{{t}}}))"),
        ("Traefik requests scraped", 'sum(traefik_entrypoint_requests_total{entrypoint="websecure"})'),
        ("controller CPU from cAdvisor", 'sum(container_cpu_usage_seconds_total{namespace="bench-traefik"})'),
    ]
    missing = []
    for what, expr in wanted:
        v = kube.prom_value(expr, at)
        if v is None or v != v or not v > 0:
            missing.append(f"{what}: {v if v is not None else 'no data'} ({expr})")
    return missing


def load_requests_mismatch(kube, testid, at, summary):
    """The summary's request count against Prometheus' (the load scenario, role=load: the summary
    leaves out the churn scenario's probes); 1% plus 5 requests for samples still in flight at the
    last remote-write flush. None when they agree, else why not."""
    total = summary["requests"]["total"]
    prom = kube.prom_value(f'sum(k6_http_reqs_total{{testid="{testid}", role="load"}})', at)
    if prom is None or abs(total - prom) > total * 0.01 + 5:
        return f'summary requests.total {total}, Prometheus k6_http_reqs_total{{role="load"}} {prom}'
    return None


def churn_pattern_problems(watch_text, pattern):
    """spec.replicas (the API watch, "<epoch> <spec.replicas> [<readyReplicas>]" per line) followed
    the churn pattern (e.g. 5:12s,7:10s) for two full cycles, each inner value held as long as the
    pattern says (-2 s / +4 s: the watch timestamps events as kubectl prints them on a busy
    machine; the last hold is cut when the run ends and the churn VU restores the start), and the
    Deployment had as many ready pods as the pattern's largest step at some point."""
    steps = []
    for step in pattern.split(","):
        m = re.fullmatch(r"(\d+):(\d+)s", step.strip())
        assert m, f"cannot read churn pattern step {step!r} of {pattern!r}"
        steps.append((int(m[1]), int(m[2])))
    hold = dict(steps)
    changes, ready_max = [], 0
    for line in watch_text.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        if len(f) > 2:
            ready_max = max(ready_max, int(f[2]))
        if not changes or changes[-1][1] != int(f[1]):
            changes.append((float(f[0]), int(f[1])))
    seen = [r for _, r in changes]
    cycle = [r for r, _ in steps]
    want = cycle * 2 + cycle[:1]
    problems = []
    if not any(seen[i:i + len(want)] == want for i in range(len(seen))):
        problems.append(f"no two full cycles {want} in spec.replicas {seen}")
    holds = [(r, t1 - t0) for (t0, r), (t1, _) in zip(changes[1:-1], changes[2:])]
    problems += [f"{r} held {d:.1f} s (pattern {hold[r]} s)" for r, d in holds[:-1]
                 if r in hold and not hold[r] - 2 <= d <= hold[r] + 4]
    if ready_max < max(hold):
        problems.append(f"never {max(hold)} ready pods (max {ready_max})")
    return problems

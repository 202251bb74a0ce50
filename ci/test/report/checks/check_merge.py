"""Checks a merged summary (benchreport results) against the runners' own summaries and Prometheus.

Usage: python check_merge.py MERGED_SUMMARY PROMETHEUS_URL RUNNER_SUMMARY...
Each RUNNER_SUMMARY is what one k6 runner wrote itself (handleSummary); its instance_id is the
number in its folder name (runner-N). Prints one line per check, exit 1 if any fails.
"""

import json
import os
import re
import sys

import checklog
from benchreport.prometheus import Prometheus  # the one client (PYTHONPATH: harness/pythonpath.py)
from checklog import SCHEMA3_RATIO, check

# The error classes from their one statement, not from the generator.
ERRORS = list(json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "scenarios",
                                          "contract.json")))["errorClasses"]["causes"])
# Percentiles are rounded to 0.001 ms in both summaries: allow that beside the bucket width.
ROUNDING_MS = 0.002


def prometheus_scalar(url, query):
    value = Prometheus(url).value(query)
    return None if value is None else float(value)


def within_bucket(estimate, true_value):
    """estimate and true_value in the same schema-3 bucket (or both about zero)."""
    if estimate is None or true_value is None:
        return False
    if true_value < 0.1:  # sub-0.1 ms: the bucket is narrower than the rounding
        return abs(estimate - true_value) <= 0.1
    lo, hi = true_value / SCHEMA3_RATIO - ROUNDING_MS, true_value * SCHEMA3_RATIO + ROUNDING_MS
    return lo <= estimate <= hi


def load(merged_path, runner_paths):
    """The merged summary and {instance_id: runner summary}, the id from the runner-N folder name."""
    merged = json.load(open(merged_path))
    runners = {}
    for path in runner_paths:
        m = re.search(r"runner-([0-9]+)", path)
        runners[m.group(1)] = json.load(open(path))
    return merged, runners


def check_requests(merged, runners, prom_url):
    """The merged request count against the runners' own counts, Prometheus' and the histogram's."""
    own_total = sum(r["requests"]["total"] for r in runners.values())
    total = merged["requests"]["total"]
    testid = merged["testid"]
    check("schema bench.summary/v1, the run id", merged["schema"] == "bench.summary/v1"
          and all(r["testid"] == testid for r in runners.values()))
    check("merged requests = sum of the runners' own counts (within 1%)",
          own_total > 0 and abs(total - own_total) <= 0.01 * own_total, f"{total} vs {own_total}")
    prom_total = prometheus_scalar(prom_url, f'sum(max_over_time(k6_http_reqs_total{{testid="{testid}", role="load"}}[30m]))')
    check("merged requests = Prometheus' own count, max_over_time of the counters (within 1%)",
          prom_total is not None and abs(total - prom_total) <= 0.01 * prom_total, f"{total} vs {prom_total}")
    if merged["settings"].get("warmup_s"):
        own_warmup = sum(r["requests"]["warmup_requests"] for r in runners.values())
        warmup = merged["requests"].get("warmup_requests")
        check("warm-up requests = sum of the runners' own counts, none in the figures", own_warmup > 0
              and warmup == own_warmup, f"{warmup} vs {own_warmup}")
        prom_warmup = prometheus_scalar(prom_url, f'sum(max_over_time(k6_http_reqs_total{{testid="{testid}", '
                                                  'scenario="warmup", role="warmup"}[30m]))')
        check("warm-up requests = Prometheus' own count of scenario warmup", warmup == prom_warmup,
              f"{warmup} vs {prom_warmup}")
    hist_count = merged["merge"]["latency_histogram_count"]
    check("merged latency histogram counts every request (within 1%)",
          abs(hist_count - total) <= 0.01 * total, f"{hist_count} vs {total}")


def check_errors(merged, runners):
    """Error classes and their causes: the sums over the runners."""
    for cls in ERRORS:
        want = sum(r["errors"][cls] for r in runners.values())
        check(f"errors.{cls} = sum over runners", merged["errors"][cls] == want, f"{merged['errors'][cls]} vs {want}")
    check("some error classes are non-zero (the test provokes them)", sum(merged["errors"].values()) > 0)
    # Causes under each class, summed over runners like the classes (every pair any runner has).
    for cls in ERRORS:
        causes = {k for r in runners.values() for k in r["error_causes"][cls]}
        want = {k: sum(r["error_causes"][cls][k] for r in runners.values()) for k in causes}
        got = {k: v for k, v in merged["error_causes"].get(cls, {}).items() if k in causes}
        check(f"error_causes.{cls} = sum over runners", got == want, f"{got} vs {want}")
        check(f"error_causes.{cls} adds up to errors.{cls}", sum(merged["error_causes"].get(cls, {}).values())
              == merged["errors"][cls], f"{merged['error_causes'].get(cls)} vs {merged['errors'][cls]}")


def check_rate(merged, runners):
    """Dropped iterations summed; the achieved rate from the merged count, near the target unless dropped."""
    dropped = sum(r["requests"]["dropped_iterations"] for r in runners.values())
    check("dropped iterations = sum over runners", merged["requests"]["dropped_iterations"] == dropped,
          f"{merged['requests']['dropped_iterations']} vs {dropped}")
    total = merged["requests"]["total"]
    rate, duration = merged["requests"]["rate_target"], merged["settings"]["duration_s"]
    check("achieved rate = merged requests / duration", merged["requests"]["rate_achieved"] == round(total / duration, 1))
    if dropped == 0:
        check("achieved rate within 2% of the run's target (no iteration dropped)",
              abs(merged["requests"]["rate_achieved"] - rate) <= 0.02 * rate,
              f"{merged['requests']['rate_achieved']} of {rate}")
    else:
        print(f"SKIPPED: achieved-rate check: the runners dropped {dropped} iterations on the busy machine")


def check_latency(merged, runners):
    """Schema-3 buckets; each merged percentile within the runners' range, widened by one bucket."""
    ratio = merged["merge"]["histogram_bucket_ratio"]
    check("native histogram schema 3: bucket bounds 2^(1/8) apart", ratio is not None and abs(ratio - SCHEMA3_RATIO) < 1e-4,
          f"ratio {ratio}")
    for p in ("p50", "p90", "p99"):
        own = [r["latency_ms"][p] for r in runners.values() if r["latency_ms"][p] is not None]
        lo, hi = min(own) / SCHEMA3_RATIO - ROUNDING_MS, max(own) * SCHEMA3_RATIO + ROUNDING_MS
        got = merged["latency_ms"][p]
        check(f"merged {p} within the runners' {p} range, widened by one bucket", got is not None and lo <= got <= hi,
              f"{got} in [{lo:.3f}, {hi:.3f}]")


def check_runner_entries(merged, runners):
    """One entry per runner with its own figures, and the merged lag verdict."""
    by_id = {r["instance_id"]: r for r in merged["runners"]}
    check("one entry per runner, by instance_id", sorted(by_id) == sorted(runners), f"{sorted(by_id)}")
    for iid, own in sorted(runners.items()):
        m = by_id.get(iid)
        if m is None:
            continue
        check(f"runner {iid}: requests = its own count", m["requests"] == own["requests"]["total"],
              f"{m['requests']} vs {own['requests']['total']}")
        check(f"runner {iid}: errors = its own classes", m["errors"] == {c: own["errors"][c] for c in ERRORS})
        check(f"runner {iid}: p99 in the bucket of its own p99", within_bucket(m["latency_ms"]["p99"], own["latency_ms"]["p99"]),
              f"{m['latency_ms']['p99']} vs {own['latency_ms']['p99']}")
        check(f"runner {iid}: lag samples = its own", m["lag_ms"]["count"] == own["runner"]["lag_ms"]["count"] > 0,
              f"{m['lag_ms']['count']} vs {own['runner']['lag_ms']['count']}")
        check(f"runner {iid}: a lag verdict", isinstance(m["cpu_bound"], bool))
        own_sched = (own["runner"].get("sched_latency_ms") or {}).get("p99")
        if own_sched is not None:  # a k6 with bench's extension reports its Go runtime
            check(f"runner {iid}: its Go runtime's figures and verdict", m["sched_p99_ms"] is not None
                  and isinstance(m["runtime_bound"], bool), f"sched p99 {m['sched_p99_ms']} (own {own_sched})")
    check("merged lag verdict: CPU-bound if any runner is", merged["runner"]["cpu_bound"] == any(r["cpu_bound"] for r in merged["runners"]))


def main(merged_path, prom_url, runner_paths):
    merged, runners = load(merged_path, runner_paths)
    check_requests(merged, runners, prom_url)
    check_errors(merged, runners)
    check_rate(merged, runners)
    check_latency(merged, runners)
    check_runner_entries(merged, runners)
    print(f"check_merge: {checklog.failures} failed")
    return 1 if checklog.failures else 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3:]))

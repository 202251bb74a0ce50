"""Whether Prometheus holds the whole run, runner by runner, and what the merge does when it does not.

k6's remote-write output sends each push once: a push that fails is lost, and its next push carries
the cumulative counters again, so a gap mid-run costs nothing but time resolution. Two losses are
not healed that way: the last push (it carries the final totals, and nothing follows it) and a
series whose samples all fell into a gap (an error class seen only then is never written). Each
runner therefore writes an end-of-run record of its own totals after its summary, retried until
Prometheus acknowledges it (scenarios/contract.json runEnd). Per runner this module:
- reads the record and compares it with the runner's series (requests, dropped iterations, bytes,
  errors by class and cause, scale events): equal, the runner is complete; larger, the series lack
  part of the run and the totals are taken from the record (exact: the runner counted them);
- finds the spans without samples of its request counter: gaps mid-run and a tail that ends more
  than one push interval before the run's end;
- names a runner that started (the runners' own count, k6_bench_run_info runners) but wrote
  nothing, and one without a record (its totals cannot be confirmed).
Latency comes from the sum of every runner's native histogram, which a lost push truncates like the
counters. A run of one runner recovers it from the record (that runner's own exact percentiles);
with several, the merged percentiles are left as the histograms give them and marked unknown for
the verdicts. `incomplete` lists what the summary still lacks after recovery; it is null when
nothing is."""

import math

from .prometheus import selector
from .summary import CONTRACT, ERROR_CLASSES, PERCENTILES

RUN_END = CONTRACT["runEnd"]
# k6's remote-write push interval when the runner did not say (K6_PROMETHEUS_RW_PUSH_INTERVAL's default)
DEFAULT_PUSH_INTERVAL_S = 5.0
# A request counter's samples may lag a push interval behind the run's end, plus k6's stop (the
# last requests finishing, the final flush): beyond this much more, the tail is missing.
END_SLACK_S = 3.0
# Counts the record carries, the merge's per-runner counts they are compared with.
COUNT_FIELDS = ("requests", "dropped_iterations", "bytes_received", "scale_events")
LATENCY_KEYS = ["min", "avg", "max"] + PERCENTILES


def end_records(prom, testid, at, lookback_s):
    """{instance_id: {field: number}} of the run's end-of-run records (RUN_END), read at `at`."""
    out = {}
    query = f"last_over_time({RUN_END['metric']}{selector(testid)}[{int(lookback_s)}s])"
    for r in prom.query(query, at):
        v = float(r["value"][1])
        if math.isfinite(v):
            out.setdefault(r["metric"].get("instance_id", ""), {})[r["metric"].get(RUN_END["label"], "")] = v
    return out


def run_end(records, last):
    """The run's end: the latest runner's end of run from the records, else the last request sample."""
    ends = [r["end_unix"] for r in records.values() if r.get("end_unix")]
    return max(ends + [last])


def _fmt_s(t, start):
    return f"+{t - start:.1f} s"


def _gaps(q, load, first, end, interval):
    """{instance_id: ([(from, to)] spans without a request-counter sample, last sample time)}: gaps
    longer than two push intervals (and a second) between samples, from a range query of the
    newest sample's time per runner."""
    step = max(1.0, round((end - first) / 5000))
    found = q.prom.query_range(f"max by (instance_id) (timestamp(k6_http_reqs_total{load}))", first, end + step, step)
    out = {}
    for r in found:
        stamps = sorted({float(v) for _, v in r["values"]})
        limit = 2 * interval + 1
        spans = [(a, b) for a, b in zip(stamps, stamps[1:]) if b - a > limit]
        out[r["metric"].get("instance_id", "")] = (spans, stamps[-1] if stamps else None)
    return out


def _record_errors(rec):
    return {c: int(rec.get(f"errors.{c}", 0)) for c in ERROR_CLASSES}


def _record_causes(rec):
    causes = {}
    prefix = "causes."
    for key, v in rec.items():
        if key.startswith(prefix):
            cls, _, cause = key[len(prefix):].partition(".")
            causes.setdefault(cls, {})[cause] = int(v)
    return causes


def _record_latency(rec):
    return {k: (round(rec[f"latency.{k}"], 3) if f"latency.{k}" in rec else None) for k in LATENCY_KEYS}


# long: one pass over the runners; each state (missing, unconfirmed, disagrees, recovered, gaps) is a branch
def check(q, testid, records, counts, expected_runners, first, end):
    """Compares every runner's series with its end-of-run record and the run's span; takes the
    totals of a runner whose series fall short from its record (counts is updated in place).
    Returns the completeness object (merge.completeness) with its `findings` (sentences) and
    `recovered_latency` (a run of one runner whose percentiles the record restores, else None)."""
    load = selector(testid, load_only=True)
    interval = max([r.get("push_interval_s") or 0 for r in records.values()] or [0]) or DEFAULT_PUSH_INTERVAL_S
    gaps = _gaps(q, load, first, end, interval)
    seen = set(counts["per_runner_requests"]) | set(records) | set(gaps)
    if expected_runners and (not seen or any(i.isdigit() for i in seen)):
        # k6-operator numbers its runners 1..N (instance_id); a run without the tag is one runner
        seen |= {str(i) for i in range(1, int(expected_runners) + 1)}
    runners, findings, notes, affects = [], [], [], set()
    recovered_latency = None
    for iid in sorted(seen, key=lambda i: (0, int(i), "") if i.isdigit() else (1, 0, i)):
        name = f"runner {iid or 'untagged'}"
        rec = records.get(iid)
        spans, last_sample = gaps.get(iid, ([], None))
        series = {"requests": int(counts["per_runner_requests"].get(iid) or 0),
                  "dropped_iterations": int(counts["per_runner_dropped"].get(iid) or 0),
                  "bytes_received": int(counts["per_runner_received"].get(iid) or 0),
                  "scale_events": int(counts["scale_events"].get(iid) or 0)}
        series_errors = {c: counts["per_runner_errors"].get(iid, {}).get(c, 0) for c in ERROR_CLASSES}
        entry = {"instance_id": iid or "untagged", "end_record": rec is not None,
                 "last_sample_unix": _round(last_sample), "end_unix": _round(rec.get("end_unix")) if rec else None,
                 "requests_series": series["requests"], "requests_end_record": int(rec["requests"]) if rec else None,
                 "gaps": [{"from_unix": _round(a), "to_unix": _round(b)} for a, b in spans], "status": "complete"}
        tail = last_sample is not None and last_sample < end - interval - END_SLACK_S
        if tail:
            entry["gaps"].append({"from_unix": _round(last_sample), "to_unix": _round(end)})
        span_text = ", ".join(f"{_fmt_s(a, first)} to {_fmt_s(b, first)}" for a, b in spans)
        if last_sample is None and rec is None:
            entry["status"] = "missing"
            affects.update(("requests", "errors", "dropped_iterations", "latency_ms"))
            findings.append(f"{name} of {expected_runners} started but wrote nothing to Prometheus and no end-of-run "
                            "record: its share of the run (requests, errors, latency) is missing from every figure")
        elif rec is None:
            entry["status"] = "unconfirmed"
            affects.update(("requests", "errors", "dropped_iterations", "latency_ms"))
            where = (f"its request samples stop at {_fmt_s(last_sample, first)} of a run that ended at "
                     f"{_fmt_s(end, first)}, so the last {end - last_sample:.1f} s are missing"
                     if tail else "its totals cannot be confirmed (a lost final push would go unseen)")
            findings.append(f"{name} delivered no end-of-run record ({RUN_END['metric']}): {where}"
                            + (f"; no samples from {span_text}" if span_text else "")
                            + "; its requests, errors and latency may be short")
        else:
            rec_counts = {k: int(rec.get(k, 0)) for k in COUNT_FIELDS}
            rec_errors = _record_errors(rec)
            short = {k: (series[k], rec_counts[k]) for k in COUNT_FIELDS if rec_counts[k] > series[k]}
            short.update({f"errors.{c}": (series_errors[c], rec_errors[c]) for c in ERROR_CLASSES
                          if rec_errors[c] > series_errors[c]})
            over = [k for k in COUNT_FIELDS if series[k] > rec_counts[k]] + [
                f"errors.{c}" for c in ERROR_CLASSES if series_errors[c] > rec_errors[c]]
            if over:
                entry["status"] = "disagrees"
                affects.update(("requests", "errors", "dropped_iterations", "latency_ms"))
                findings.append(f"{name}: its series count more than its end-of-run record ("
                                + ", ".join(f"{k} {series[k] if k in series else series_errors[k[7:]]} > "
                                            f"{rec_counts[k] if k in rec_counts else rec_errors[k[7:]]}" for k in over)
                                + "): two runs under one run id, or a record from another run")
            elif short:
                entry["status"] = "recovered"
                _take_record(counts, iid, rec, rec_counts, rec_errors)
                where = (f"samples from {span_text}" if span_text else "")
                if tail:
                    where += (", and " if where else "") + (f"samples after {_fmt_s(last_sample, first)} "
                                                             f"(the run ended at {_fmt_s(end, first)})")
                notes.append(f"{name}: Prometheus lacks {where or 'its final push'}: "
                             + ", ".join(f"{k} {a} in the series, {b} in its end-of-run record" for k, (a, b) in short.items())
                             + "; the totals are taken from the record")
                entry["latency_ms"] = _record_latency(rec)
            elif spans or tail:
                notes.append(f"{name}: no samples from {span_text or _fmt_s(last_sample, first) + ' to the end'}; "
                             "its totals are whole (its end-of-run record agrees), the time series only average "
                             "over that span")
        runners.append(entry)
    recovered = [r for r in runners if r["status"] == "recovered"]
    if recovered:
        if len(runners) == 1 and runners[0]["latency_ms"]["p99"] is not None:
            recovered_latency = runners[0]["latency_ms"]
            notes.append("latency from runner "
                         f"{runners[0]['instance_id']}'s end-of-run record (its own exact percentiles): its histogram "
                         "in Prometheus lacks the same requests")
        else:
            affects.add("latency_ms")
            findings.append("latency: the histograms of runner(s) "
                            + ", ".join(r["instance_id"] for r in recovered)
                            + " in Prometheus lack the requests above, and percentiles of several runners cannot be "
                              "rebuilt from their records: the merged percentiles are unknown")
        affects.update(("by_path", "max_rps", "calibrate"))
    return {
        "complete": not findings,
        "runners_expected": int(expected_runners) if expected_runners else None,
        "push_interval_s": interval,
        "run_end_unix": _round(end),
        "runners": runners,
        "affects": sorted(affects) if findings else [],
        "findings": findings,
        "notes": notes,
    }, recovered_latency


def _take_record(counts, iid, rec, rec_counts, rec_errors):
    """The runner's totals from its record, and the run's totals moved by the same amounts."""
    for field, per, total in (("requests", "per_runner_requests", "total"), ("dropped_iterations", "per_runner_dropped",
                              "dropped"), ("bytes_received", "per_runner_received", "received")):
        before = int(counts[per].get(iid) or 0)
        counts[per][iid] = rec_counts[field]
        counts[total] += rec_counts[field] - before
    counts["scale_events"][iid] = rec_counts["scale_events"]
    runner_errors = counts["per_runner_errors"].setdefault(iid, {})
    for c in ERROR_CLASSES:
        delta = rec_errors[c] - runner_errors.get(c, 0)
        runner_errors[c] = rec_errors[c]
        counts["errors"][c] += delta
    for cls, causes in _record_causes(rec).items():
        if cls not in ERROR_CLASSES:
            continue
        per_cause = counts["per_runner_causes"].setdefault(iid, {}).setdefault(cls, {})
        for cause, n in causes.items():
            delta = n - per_cause.get(cause, 0)
            if delta > 0:
                per_cause[cause] = n
                counts["error_causes"].setdefault(cls, {})[cause] = counts["error_causes"].get(cls, {}).get(cause, 0) + delta


def incomplete_of(completeness):
    """The summary's `incomplete`: null when the merge lacks nothing, else what and why."""
    if completeness["complete"]:
        return None
    return {"affects": completeness["affects"], "findings": completeness["findings"],
            "runners": [r["instance_id"] for r in completeness["runners"] if r["status"] not in ("complete", "recovered")]
            or [r["instance_id"] for r in completeness["runners"] if r["status"] == "recovered"]}


def _round(v, digits=3):
    return None if v is None else round(v, digits)

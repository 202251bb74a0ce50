"""Writes the report of summary files: report.html, report.md, report.json and charts/ in one folder.
Its command line is cli.py; results.run calls write_report after merging a run."""

import datetime
import json
import os
import sys
from dataclasses import dataclass, field

from .control import added_latency, find_direct
from .prometheus import DEFAULT_LOOKBACK_S, Prometheus, PrometheusError, TimeSeries
from .repeats import summarize as summarize_repeats
from .summary import SummaryError, label_runs, load_summary
from .timeline import attribution_of, run_attribution
from .verdict import BudgetError, comparability_warnings, parse_budgets

# The exit status of a report or a merge whose run Prometheus did not hold whole (summary
# `incomplete`), unless the user asked for a partial result (--allow-partial).
INCOMPLETE_EXIT = 3


@dataclass
class ReportRequest:
    """What to report on and how (the report CLI's options)."""
    summaries: list
    out: str
    prometheus: str = None
    prometheus_lookback: float = DEFAULT_LOOKBACK_S
    budget: list = field(default_factory=list)
    fail_on_verdict: bool = False
    direct: str = None
    attribution_window: float = None  # seconds; None: timeline's default
    allow_partial: bool = False  # an incomplete run's report exits 0, not INCOMPLETE_EXIT


def fetch_series(prom, runs, args):
    """{testid: TimeSeries} of every run (one query set per testid), with its event attribution; a
    run Prometheus cannot answer for gets a TimeSeries that says why."""
    series = {}
    for run in runs:
        if run.path_name or run.testid in series:
            continue
        try:
            ts = series[run.testid] = prom.series(run.testid, args.prometheus_lookback)
            if ts.request_rate:
                ts.attribution = run_attribution(prom, run.testid, ts.start, ts.end, ts.step, run.controller,
                                                 args.attribution_window)
        except PrometheusError as e:
            print(f"warning: {e}", file=sys.stderr)
            series[run.testid] = TimeSeries(run.testid, notes=[str(e)])
    return series


def report_record(generated, budgets, warnings, runs, verdicts, series, direct, added):
    """report.json: the verdicts and what they rest on, per run."""
    return {
        "schema": "bench.report/v1",
        "generated": generated,
        "budgets": [b.text for b in budgets],
        "warnings": warnings,
        "runs": [{"label": r.label, "testid": r.testid, "path": r.path_name, "source": r.source,
                  "verdict": verdicts[r.label].status, "reasons": verdicts[r.label].reasons,
                  "timeseries": bool(series.get(r.testid) and series[r.testid].request_rate),
                  "scale_events_seen": (sum(n for _, _, n in series[r.testid].scale_events)
                                        if r.testid in series else None),
                  "attribution": attribution_of(r, series),
                  "incomplete": r.incomplete or None}
                 for r in runs],
        "series": summarize_repeats(runs),
        "added_latency": {"direct": direct.testid, "runs": added} if direct else None,
    }


def write_report(args):
    """Writes the report of a ReportRequest; returns the exit status (0, 1 a run failed its budgets
    with fail_on_verdict, 2 bad input, 3 a run is incomplete without allow_partial), printing the
    verdicts and any error."""
    try:
        budgets = parse_budgets(args.budget)
        prom = Prometheus(args.prometheus) if args.prometheus else None
        runs = []
        for path in args.summaries:
            runs += load_summary(path)
    except (SummaryError, BudgetError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    label_runs(runs)
    warnings = comparability_warnings(runs)
    try:
        direct = find_direct(runs, args.direct) if args.direct else None
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    added = added_latency(runs, direct) if direct else {}

    series = fetch_series(prom, runs, args) if prom else {}

    from . import document  # matplotlib loads in seconds: only once the input is known to be good

    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    blocks, verdicts = document.build(runs, budgets, warnings, series, generated, args.prometheus,
                                      direct=direct, added=added)

    os.makedirs(os.path.join(args.out, "charts"), exist_ok=True)
    for b in blocks:
        if b.kind == "chart":
            with open(os.path.join(args.out, "charts", b.name), "w", encoding="utf-8") as f:
                f.write(b.svg)
    with open(os.path.join(args.out, "report.md"), "w", encoding="utf-8") as f:
        f.write(document.to_markdown(blocks))
    with open(os.path.join(args.out, "report.html"), "w", encoding="utf-8") as f:
        f.write(document.to_html(blocks))
    with open(os.path.join(args.out, "report.json"), "w", encoding="utf-8") as f:
        json.dump(report_record(generated, budgets, warnings, runs, verdicts, series, direct, added), f, indent=2)
        f.write("\n")

    for r in runs:
        v = verdicts[r.label]
        print(f"{v.status:7} {r.label}" + (f": {'; '.join(v.reasons)}" if v.reasons else ""))
    for w in warnings:
        print(f"warning: {w}")
    print(f"report: {os.path.join(args.out, 'report.html')} and report.md")
    incomplete = sorted({r.testid for r in runs if r.incomplete})
    if incomplete and not args.allow_partial:
        print(f"error: run(s) {', '.join(incomplete)} incomplete: Prometheus lacks part of them (above); their "
              "verdicts that depend on it are withheld. --allow-partial accepts the partial result", file=sys.stderr)
        return INCOMPLETE_EXIT
    if args.fail_on_verdict and any(v.status != "PASS" for v in verdicts.values()):
        return 1
    return 0

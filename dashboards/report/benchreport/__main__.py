"""bench report: summary.json files (+ Prometheus) -> report.html, report.md, report.json, charts/.
`results` (results.py): one run id + Prometheus -> the merged summary.json of all runners, then its report."""

import argparse
import datetime
import json
import os
import sys

from .control import added_latency, find_direct
from .repeats import summarize as summarize_repeats
from .prometheus import DEFAULT_LOOKBACK_S, Prometheus, PrometheusError, TimeSeries
from .summary import SummaryError, label_runs, load_summary
from .verdict import ALL_BUDGET_KEYS, DEFAULT_BUDGETS, BudgetError, comparability_warnings, parse_budgets


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="dashboards/report/report.sh",
        description="Write a self-contained report (HTML with embedded SVG, Markdown, JSON) from "
                    "bench.summary/v1 files; several files are compared side by side.",
        epilog="Budget keys: " + ", ".join(ALL_BUDGET_KEYS) + ". Each is a maximum. Default budgets: "
               + " ".join(DEFAULT_BUDGETS) + ". Exit status: 0 report written, 1 a run failed its "
               "budgets (only with --fail-on-verdict), 2 bad input.")
    p.add_argument("summaries", nargs="+", metavar="summary.json", help="bench.summary/v1 files")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created)")
    p.add_argument("--prometheus", metavar="URL", help="Prometheus holding the runs' k6 remote-write series")
    p.add_argument("--prometheus-lookback", metavar="SECONDS", type=float, default=DEFAULT_LOOKBACK_S,
                   help="how far back to look for the runs in Prometheus (default: %(default)g)")
    p.add_argument("--budget", action="append", metavar="KEY=VALUE",
                   help="e.g. p99.99=100ms, errors=0, errors.http_5xx=0.1%%, dropped_iterations=0, "
                        "convergence.added=2s; repeat for several")
    p.add_argument("--fail-on-verdict", action="store_true",
                   help="exit 1 when a run does not PASS (for CI gates)")
    p.add_argument("--direct", metavar="TESTID",
                   help="the run id of the control run, the same experiment direct to the backend pods "
                        "(loadtest.target=pod): the report gives every other run's added latency per "
                        "percentile (through the controller minus direct)")
    return p.parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["results"]:
        from .results import main as results_main
        return results_main(argv[1:])
    args = parse_args(argv)
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

    series = {}
    if prom:
        for run in runs:
            if run.path_name or run.testid in series:
                continue
            try:
                series[run.testid] = prom.series(run.testid, args.prometheus_lookback)
            except PrometheusError as e:
                print(f"warning: {e}", file=sys.stderr)
                series[run.testid] = TimeSeries(run.testid, notes=[str(e)])

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
    result = {
        "schema": "bench.report/v1",
        "generated": generated,
        "budgets": [b.text for b in budgets],
        "warnings": warnings,
        "runs": [{"label": r.label, "testid": r.testid, "path": r.path_name, "source": r.source,
                  "verdict": verdicts[r.label].status, "reasons": verdicts[r.label].reasons,
                  "timeseries": bool(series.get(r.testid) and series[r.testid].request_rate),
                  "scale_events_seen": len(series[r.testid].scale_events) if r.testid in series else None}
                 for r in runs],
        "series": summarize_repeats(runs),
        "added_latency": {"direct": direct.testid, "runs": added} if direct else None,
    }
    with open(os.path.join(args.out, "report.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")

    for r in runs:
        v = verdicts[r.label]
        print(f"{v.status:7} {r.label}" + (f": {'; '.join(v.reasons)}" if v.reasons else ""))
    for w in warnings:
        print(f"warning: {w}")
    print(f"report: {os.path.join(args.out, 'report.html')} and report.md")
    if args.fail_on_verdict and any(v.status != "PASS" for v in verdicts.values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""bench report: summary.json files (+ Prometheus) -> report.html, report.md, report.json, charts/.
`results` (results.py): one run id + Prometheus -> the merged summary.json of all runners, then its report.
`rerun` (provenance.py): a merged summary -> the values file that runs it again."""

import argparse
import sys

from .prometheus import DEFAULT_LOOKBACK_S
from .report import ReportRequest, write_report
from .provenance import rerun_main
from .results import main as results_main
from .verdict import ALL_BUDGET_KEYS, DEFAULT_BUDGETS


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
        return results_main(argv[1:])
    if argv[:1] == ["rerun"]:
        return rerun_main(argv[1:])
    return write_report(ReportRequest(**vars(parse_args(argv))))


if __name__ == "__main__":
    sys.exit(main())

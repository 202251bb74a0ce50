"""The command lines of benchreport, in one place: every argument parser and the dispatch to the
functions that do the work, which take their inputs as arguments (a ReportRequest, a
ResultsRequest, paths), never as argv lists. No other module of the package parses arguments.

  python -m benchreport [report options] summary.json...     report.write_report
  python -m benchreport results ...                          results.run (make results)
  python -m benchreport rerun ...                            provenance.write_rerun_values (make rerun)
  python -m benchreport.prometheus ...                       the Prometheus client (the e2e harness reads with it)
The console scripts of pyproject.toml (bench-report, bench-prometheus) call main and prometheus_main."""

import argparse
import sys

from . import provenance, results, timeline
from .prometheus import DEFAULT_LOOKBACK_S, Prometheus, PrometheusError, text_sum
from .report import ReportRequest, write_report
from .verdict import ALL_BUDGET_KEYS, DEFAULT_BUDGETS


def report_parser():
    p = argparse.ArgumentParser(
        prog="dashboards/report/report.sh",
        description="Write a self-contained report (HTML with embedded SVG, Markdown, JSON) from "
                    "bench.summary/v1 files; several files are compared side by side.",
        epilog="Budget keys: " + ", ".join(ALL_BUDGET_KEYS) + ". Each is a maximum. Default budgets: "
               + " ".join(DEFAULT_BUDGETS) + ". Exit status: 0 report written, 1 a run failed its "
               "budgets (only with --fail-on-verdict), 2 bad input, 3 report written but a merged run is "
               "incomplete (without --allow-partial).")
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
    p.add_argument("--allow-partial", action="store_true",
                   help="exit 0 for a merged run Prometheus did not hold whole (summary `incomplete`; its "
                        "verdicts that depend on the missing samples are withheld) instead of 3")
    p.add_argument("--direct", metavar="TESTID",
                   help="the run id of the control run, the same experiment direct to the backend pods "
                        "(loadtest.target=pod): the report gives every other run's added latency per "
                        "percentile (through the controller minus direct)")
    p.add_argument("--attribution-window", type=_window, metavar="DURATION",
                   help="W: an error or latency outlier is attributed to the nearest event at most this long "
                        "before it (default: 2s plus the longer of one query step and k6's push interval), "
                        "e.g. 2s or 1500ms")
    return p


def _window(text):
    """--attribution-window's seconds; its refusal names the value and what is allowed."""
    try:
        return timeline.parse_window(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def results_parser():
    p = argparse.ArgumentParser(
        prog="make results",
        description="Merge every k6 runner of one run from Prometheus into one bench.summary/v1 "
                    "(OUT/summary.json) and write its report (OUT/report.html, report.md, report.json).",
        epilog="Exit status: 0 written, 1 the run failed its budgets (only with --fail-on-verdict), "
               "2 bad input or no such run in Prometheus, 3 written but incomplete: Prometheus lacks part of the "
               "run (without --allow-partial).")
    p.add_argument("--prometheus", required=True, metavar="URL",
                   help="Prometheus with the run's remote-write series, e.g. http://127.0.0.1:9090 "
                        "(kubectl port-forward svc/<prometheus> 9090)")
    p.add_argument("--list", action="store_true", help="print the run ids Prometheus holds, then exit")
    p.add_argument("--testid", metavar="ID", help="the run id (loadtest.runId, the TestRun's bench/testid label)")
    p.add_argument("--out", metavar="DIR", help="output folder (created)")
    p.add_argument("--runner-summary", action="append", default=[], metavar="FILE",
                   help="a runner's own summary.json (its environment and settings); repeatable")
    p.add_argument("--rate", type=float, metavar="REQ_PER_S",
                   help="the run's target rate (all runners), over what its runners wrote")
    p.add_argument("--duration", metavar="DURATION", help="the run's load duration, e.g. 180s, over what its runners wrote")
    p.add_argument("--lookback", type=float, default=DEFAULT_LOOKBACK_S, metavar="SECONDS",
                   help="how far back to look for the run (default: %(default)g)")
    p.add_argument("--wait-settled", type=float, default=0, metavar="SECONDS",
                   help="first wait (at most this long) until the run's request count in Prometheus "
                        "reads the same twice, 2 s apart: right after a run, the last remote writes")
    p.add_argument("--series", metavar="ID", help="this run is one repeat of series ID (the matrix runner's "
                                                  "--repeats): the report gives the series' median and interval")
    p.add_argument("--repeat", type=int, metavar="N", help="which repeat of --series this run is (from 1)")
    p.add_argument("--controller-namespace", default=".*", metavar="REGEX",
                   help="namespace(s) of the controller's pods, for its CPU and memory from cAdvisor "
                        "(default: any)")
    p.add_argument("--controller-pods", metavar="REGEX",
                   help="pod-name regex of the controller's pods (default: the controller dashboard's, "
                        "scenarios/contract.json controllerPods)")
    p.add_argument("--release", metavar="NAME",
                   help="the Helm release that ran it: the summary then records its provenance (chart and "
                        "subchart versions, the values given, Kubernetes, nodes, the controller's image "
                        "digests, runners), read with your helm and kubectl; make rerun runs it again")
    p.add_argument("--namespace", default="bench", metavar="NS", help="the release's namespace (default: %(default)s)")
    p.add_argument("--budget", action="append", default=[], metavar="KEY=VALUE", help="as for the report")
    p.add_argument("--fail-on-verdict", action="store_true", help="exit 1 when the run does not PASS")
    p.add_argument("--allow-partial", action="store_true",
                   help="accept a run Prometheus did not hold whole: write its summary marked incomplete and "
                        "exit 0 (without: 3)")
    p.add_argument("--attribution-window", type=_window, metavar="DURATION",
                   help="W: an error or latency outlier is attributed to the nearest event at most this long "
                        "before it (default: 2s plus the longer of one query step and k6's push interval), "
                        "e.g. 2s or 1500ms")
    return p


def check_results_args(p, args):
    """The results options' values, each refused with what is allowed (argparse's exit status 2)."""
    if not args.list:
        for name in ("testid", "out"):
            if not getattr(args, name):
                p.error(f"--{name} is required (or --list)")
        if not results.RUN_ID.match(args.testid):
            p.error(f"--testid {args.testid!r} is not a run id: letters, digits, '-', '_', '.', at most 63")
    if (args.series is None) != (args.repeat is None):
        p.error("--series and --repeat go together: the series id and this run's repeat number")
    if args.series is not None and not results.RUN_ID.match(args.series):
        p.error(f"--series {args.series!r} is not a series id: letters, digits, '-', '_', '.', at most 63")
    if args.repeat is not None and args.repeat < 1:
        p.error(f"--repeat {args.repeat} must be a whole number from 1")
    for name, pattern, most in (("release", results.RELEASE, 53), ("namespace", results.NAMESPACE, 63)):
        value = getattr(args, name)
        if value is not None and not pattern.match(value):
            p.error(f"--{name} {value!r} is not a {name} name: lowercase letters, digits and '-', at most {most}")
    if args.rate is not None and args.rate <= 0:
        p.error(f"--rate {args.rate:g} must be a positive number of requests per second")


def rerun_parser():
    p = argparse.ArgumentParser(prog="make rerun", description="Write the values of SUMMARY's run (its provenance) "
                                "to --out, for `helm upgrade -f` with the chart at --chart; prints 'RELEASE NAMESPACE'.")
    p.add_argument("--summary", required=True, metavar="FILE", help="a merged summary.json (make results, the matrix)")
    p.add_argument("--chart", required=True, metavar="DIR", help="the bench chart to run it with")
    p.add_argument("--out", required=True, metavar="FILE", help="the values file to write (JSON, which Helm reads as YAML)")
    return p


def main(argv=None):
    """`python -m benchreport`: the report, or the `results` or `rerun` command; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["results"]:
        p = results_parser()
        args = p.parse_args(argv[1:])
        check_results_args(p, args)
        if args.list:
            return results.list_runs(args.prometheus, args.lookback)
        return results.run(results.ResultsRequest(**{k: v for k, v in vars(args).items() if k != "list"}))
    if argv[:1] == ["rerun"]:
        args = rerun_parser().parse_args(argv[1:])
        return provenance.write_rerun_values(args.summary, args.chart, args.out)
    return write_report(ReportRequest(**vars(report_parser().parse_args(argv))))


def prometheus_parser():
    parser = argparse.ArgumentParser(prog="python -m benchreport.prometheus")
    parser.add_argument("--url", help="Prometheus base URL, e.g. http://127.0.0.1:9090 (all but text-sum)")
    sub = parser.add_subparsers(dest="cmd", required=True)
    value = sub.add_parser("value", help="first sample value of an instant query (empty: no data)")
    value.add_argument("query")
    value.add_argument("--at", type=float, help="evaluation time, seconds since the epoch (default now)")
    settled = sub.add_parser("settled", help="wait for a run's last samples; print the instant")
    settled.add_argument("testid")
    settled.add_argument("--timeout", type=float, default=30.0)
    span = sub.add_parser("span", help="first and last sample times of a run's request counter")
    span.add_argument("testid")
    text = sub.add_parser("text-sum", help="sum of a metric's samples in a /metrics page on stdin")
    text.add_argument("name", help="sample name, e.g. traefik_service_requests_total")
    text.add_argument("matchers", nargs="*", help='key=value or key=~regex, e.g. service=~".*@kubernetesgateway"')
    return parser


def prometheus_main(argv=None):
    """The harness' one Prometheus client on the command line (bench-prometheus)."""
    parser = prometheus_parser()
    args = parser.parse_args(argv)
    if args.cmd == "text-sum":
        print(f"{text_sum(sys.stdin.read(), args.name, args.matchers):.0f}")
        return 0
    if not args.url:
        parser.error(f"{args.cmd} needs --url")
    prom = Prometheus(args.url)
    try:
        if args.cmd == "value":
            print(prom.value(args.query, args.at) or "")
        elif args.cmd == "settled":
            print(f"{prom.settled(args.testid, args.timeout):.3f}")
        else:
            found = prom.locate_run(args.testid)
            print(f"{found[0]:.3f} {found[1]:.3f}" if found else "")
    except PrometheusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0

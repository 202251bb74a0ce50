"""`results`: one run id + a Prometheus URL -> the merged summary.json and the report of that run.

Its command line (cli.py; make results TESTID=... PROMETHEUS=... OUT=...):
  python -m benchreport results --testid ID --prometheus URL --out DIR
      [--runner-summary summary.json ...] [--rate N] [--duration 180s] [--wait-settled SECONDS]
      [--series ID --repeat N] [--controller-namespace REGEX] [--controller-pods REGEX]
      [--release NAME [--namespace NS]] [--budget KEY=VALUE ...] [--fail-on-verdict] [--lookback SECONDS]
  python -m benchreport results --list --prometheus URL
Prometheus holds what every runner measured and what the run was asked to do: each runner's setup()
writes the settings as the tags of k6_bench_run_info (scenarios/lib/run-info.js). In this order,
later winning: those, a runner's own summary (--runner-summary: its environment), --rate/--duration;
a setting none of them gives stays null (the duration is then measured from the samples, with a
note). With --release, the summary's provenance records what reruns it (provenance.py: the user's
helm and kubectl read the release, its cluster and the controller's image digests)."""

import json
import os
import re
import sys
import time
from dataclasses import dataclass, field

from .cost import controller_cost
from .duration import DurationError, parse_duration
from .completeness import RUN_END
from .merge import MergeError, merge_run
from .prometheus import DEFAULT_LOOKBACK_S, Prometheus, PrometheusError, query_step, selector
from .provenance import collect as collect_provenance
from .report import ReportRequest, write_report
from .summary import SCHEMA, SETTINGS_ORDER, prometheus_name
from .timeline import run_attribution

RUN_ID = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")  # charts/bench values.schema.json
RELEASE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$")  # a Helm release name: at most 53
NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class SettingsError(ValueError):
    """A settings source that cannot be read; the message names it and what is allowed."""


def parse_duration_s(text, where):
    """'180s', '3m', '1m30s' or '500ms' (BENCH_DURATION's grammar) -> seconds."""
    try:
        return parse_duration(text, "s")
    except DurationError:
        raise SettingsError(f"{where} {text!r} is not a duration; expected e.g. 180s, 3m, 1m30s") from None


def _read_json(flag, path, hint=""):
    """The JSON document a FLAG names, or a SettingsError naming the flag, the file and the problem."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise SettingsError(f"{flag} {path}: cannot read: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise SettingsError(f"{flag} {path}: not JSON ({e.msg}){hint}") from e


def settings_from_prometheus(prom, testid, lookback_s):
    """The run's settings from the tags of its k6_bench_run_info series (scenarios/lib/run-info.js;
    every runner writes the same): {} when the run has none (a runner older than the series)."""
    found = prom.query(f"last_over_time(k6_bench_run_info{selector(testid)}[{int(lookback_s)}s])", time.time())
    if not found:
        return {}
    tags = found[0]["metric"]

    def number(name):
        v = tags.get(name)
        if v in (None, ""):
            return None
        f = float(v)
        return int(f) if f.is_integer() else f

    target_url = tags.get("target_url") or None
    settings = {
        "target_url": target_url,
        "path": tags.get("path") or None,
        "rate": number("rate"),
        "duration_s": number("duration_s"),
        "warmup_s": number("warmup_s"),
        "connections": number("connections"),
        "timeout_s": number("timeout_s"),
        "keepalive": None if "keepalive" not in tags else tags["keepalive"] == "true",
        "tls": bool(target_url and target_url.startswith("https:")),
        "runner_parallelism": number("runners"),
        "k6_version": tags.get("k6_version") or None,
    }
    return {k: v for k, v in settings.items() if v is not None}


def settings_from_runner_summary(path, testid):
    """settings of one runner's own summary.json (the same in every runner of a run, except the
    rate and runner_share: a runner's own share, not the run's, so neither is taken from here)."""
    data = _read_json("--runner-summary", path)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise SettingsError(f"--runner-summary {path}: not a {SCHEMA} document")
    if data.get("testid") != testid:
        raise SettingsError(f"--runner-summary {path}: testid {data.get('testid')!r}, not the run {testid!r}")
    settings = dict(data.get("settings") or {})
    settings.pop("rate", None)
    settings.pop("runner_share", None)
    return settings, data.get("scenario"), data.get("controller")


@dataclass
class ResultsRequest:
    """What to merge and report (the results command's options, cli.py)."""
    prometheus: str
    testid: str
    out: str
    runner_summary: list = field(default_factory=list)
    rate: float = None
    duration: str = None
    lookback: float = DEFAULT_LOOKBACK_S
    wait_settled: float = 0
    series: str = None
    repeat: int = None
    controller_namespace: str = ".*"
    controller_pods: str = None
    release: str = None
    namespace: str = "bench"
    budget: list = field(default_factory=list)
    fail_on_verdict: bool = False
    attribution_window: float = None  # seconds; None: timeline's default
    allow_partial: bool = False


def list_runs(prometheus_url, lookback_s):
    """`results --list`: prints the run ids Prometheus holds; returns the exit status."""
    try:
        for testid in Prometheus(prometheus_url).testids(lookback_s):
            print(testid)
    except (PrometheusError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


# What a runner's own summary and the merged runner entry both count: (summary key, label).
COMPARED = (("requests", "requests"), ("dropped_iterations", "dropped iterations"))


def compare_runner_summaries(paths, summary):
    """Each --runner-summary against the merge: its runner's entry (by the instance_id of its end
    record, or the only runner). Returns one sentence per runner whose figures differ, naming the
    file, the runner and both values; one that names no runner of the merge is a merge note."""
    out = []
    runners = {r["instance_id"]: r for r in summary["runners"]}
    for path in paths:
        own = _read_json("--runner-summary", path)
        iid = (own.get("end_record") or {}).get("instance_id") or (next(iter(runners)) if len(runners) == 1 else None)
        merged = runners.get(iid)
        if merged is None:
            summary["merge"]["notes"].append(
                f"--runner-summary {path}: not compared: it names no runner of the merge (its end record's "
                f"instance_id {iid!r}; the merge has {', '.join(runners) or 'none'})")
            continue
        mine = {"requests": own["requests"]["total"], "dropped_iterations": own["requests"].get("dropped_iterations") or 0}
        theirs = {"requests": merged["requests"], "dropped_iterations": merged["dropped_iterations"]}
        diffs = [f"{label} {mine[k]} in the runner's summary, {theirs[k]} merged" for k, label in COMPARED
                 if mine[k] != theirs[k]]
        diffs += [f"errors.{c} {own['errors'].get(c, 0)} in the runner's summary, {merged['errors'].get(c, 0)} merged"
                  for c in merged["errors"] if own["errors"].get(c, 0) != merged["errors"].get(c, 0)]
        if diffs:
            out.append(f"runner {iid} disagrees with its own summary {path}: " + "; ".join(diffs))
    return out


def collect_settings(args, prom):
    """(settings, scenario, controller): Prometheus, then runner summaries, then the flags."""
    settings = settings_from_prometheus(prom, args.testid, args.lookback)
    scenario, controller = None, None
    for path in args.runner_summary:
        s, sc, ctl = settings_from_runner_summary(path, args.testid)
        settings.update({k: v for k, v in s.items() if v is not None or k not in settings})
        scenario, controller = scenario or sc, controller or ctl
    if args.rate is not None:
        settings["rate"] = int(args.rate) if args.rate.is_integer() else args.rate
    if args.duration is not None:
        settings["duration_s"] = parse_duration_s(args.duration, "--duration")
    # the keys of a runner's settings (scenarios/interfaces.md): null when no source gave them
    for key in SETTINGS_ORDER:
        settings.setdefault(key, None)
    return settings, scenario, controller


def routes_created(prom, testid, last_sample):
    """How many routes the run's route experiment created (bench_routes_created, every kind, read
    at the run's last sample): None for a run that created none."""
    name = prometheus_name("bench_routes_created")
    result = prom.query(f"sum(last_over_time({name}{selector(testid)}[{int(DEFAULT_LOOKBACK_S)}s]))", last_sample + 5)
    count = round(float(result[0]["value"][1])) if result else 0
    return count or None


def wait_end_records(prom, testid, deadline):
    """Waits, at most until deadline, for an end-of-run record from every runner with request series:
    a runner sends it after its summary, retrying while Prometheus is out of reach, so it can land
    after k6-operator calls the run finished. Returns either way: a record still missing is the
    merge's finding."""
    runners = f"count(count by (instance_id) (last_over_time(k6_http_reqs_total{selector(testid)}[{int(DEFAULT_LOOKBACK_S)}s])))"
    records = (f"count(count by (instance_id) (last_over_time({RUN_END['metric']}{selector(testid)}"
               f"[{int(DEFAULT_LOOKBACK_S)}s])))")
    while time.time() < deadline:
        want, got = prom.query(runners, time.time()), prom.query(records, time.time())
        if want and got and got[0]["value"][1] == want[0]["value"][1]:
            return
        time.sleep(2)


def wait_settled(prom, testid, timeout_s):
    """Waits until the run's request total in Prometheus reads the same twice, 2 s apart, then (within
    the same timeout) for every runner's end-of-run record."""
    query = f"sum(last_over_time(k6_http_reqs_total{selector(testid)}[{int(DEFAULT_LOOKBACK_S)}s]))"
    deadline = time.time() + timeout_s
    last = None
    while time.time() < deadline:
        result = prom.query(query, time.time())
        now = result[0]["value"][1] if result else None
        if now is not None and now == last:
            wait_end_records(prom, testid, deadline)
            return
        last = now
        time.sleep(2)
    raise MergeError(f"the request count of run {testid} in Prometheus did not settle within {timeout_s:g} s "
                     f"(last read: {last}); is the run still going?")


def run(args):
    """Merges the run of a ResultsRequest into OUT/summary.json and writes its report; returns the
    exit status (0, 1 a run failed its budgets with fail_on_verdict, 2 bad input or no such run,
    3 the summary is marked incomplete and allow_partial is not set)."""
    try:
        prom = Prometheus(args.prometheus)
        if args.wait_settled > 0:
            wait_settled(prom, args.testid, args.wait_settled)
        settings, scenario, controller = collect_settings(args, prom)
        summary = merge_run(prom, args.testid, settings, args.lookback, scenario, controller)
        if args.series:
            summary["series"] = {"id": args.series, "repeat": args.repeat}
        summary["controller_cost"] = controller_cost(
            prom, summary["merge"]["first_sample_unix"], summary["merge"]["last_sample_unix"],
            summary["requests"]["total"], namespace_regex=args.controller_namespace,
            pod_regex=args.controller_pods, routes=routes_created(prom, args.testid, summary["merge"]["last_sample_unix"]))
        first, last = summary["merge"]["first_sample_unix"], summary["merge"]["last_sample_unix"]
        summary["attribution"] = run_attribution(prom, args.testid, first, last, query_step(first, last),
                                                 summary["controller"], args.attribution_window)
        if args.release:
            summary["provenance"] = collect_provenance(args.release, args.namespace, args.controller_namespace,
                                                       summary["controller_cost"]["pod_regex"])
        disagreements = compare_runner_summaries(args.runner_summary, summary)
        if disagreements:
            summary["merge"]["completeness"]["findings"] += disagreements
            summary["merge"]["completeness"]["complete"] = False
            inc = summary["incomplete"] or {"affects": [], "findings": [], "runners": []}
            inc["findings"] = inc["findings"] + disagreements
            inc["affects"] = sorted(set(inc["affects"]) | {"requests", "errors", "dropped_iterations", "latency_ms"})
            summary["incomplete"] = inc
    except (SettingsError, MergeError, PrometheusError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "summary.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    r = summary["requests"]
    print(f"merged {summary['merge']['runners']} runner(s) of {args.testid}: {r['total']} requests, "
          f"{r['rate_achieved']} req/s of {r['rate_target']}, p99 {summary['latency_ms']['p99']} ms, "
          f"errors {sum(summary['errors'].values())}, dropped {r['dropped_iterations']} -> {path}")
    for note in summary["merge"]["notes"]:
        print(f"note: {note}")
    for finding in (summary["incomplete"] or {}).get("findings") or []:
        print(f"INCOMPLETE: {finding}")
    for part, reason in ((summary.get("provenance") or {}).get("unreadable") or {}).items():
        print(f"note: provenance: {part} not recorded: {reason}")
    if summary["controller_cost"]["unknown_reason"]:
        print(f"note: controller cost unknown: {summary['controller_cost']['unknown_reason']}")
    return write_report(ReportRequest([path], args.out, prometheus=args.prometheus,
                                      prometheus_lookback=args.lookback, budget=args.budget,
                                      fail_on_verdict=args.fail_on_verdict,
                                      attribution_window=args.attribution_window,
                                      allow_partial=args.allow_partial))

"""`results`: one run id + a Prometheus URL -> the merged summary.json and the report of that run.

Usage (make results TESTID=... PROMETHEUS=... OUT=...):
  python -m benchreport results --testid ID --prometheus URL --out DIR
      [--testrun testrun.json] [--values helm-values.json] [--runner-summary summary.json ...]
      [--rate N] [--duration 180s] [--wait-settled SECONDS]
      [--budget KEY=VALUE ...] [--fail-on-verdict] [--lookback SECONDS]
  python -m benchreport results --list --prometheus URL
Prometheus holds what every runner measured but not what the run was asked to do: the target rate
and duration (for the achieved rate) and the other settings come, in this order of precedence, from
--rate/--duration, the chart values (`helm get values RELEASE --all -o json`), the TestRun
(`kubectl get testrun NAME -o json`: the runner env the chart rendered), a runner's own summary
(--runner-summary), and otherwise stay null (the duration is then
measured from the samples, with a note)."""

import argparse
import json
import os
import re
import sys
import time

from .merge import MergeError, merge_run
from .prometheus import DEFAULT_LOOKBACK_S, Prometheus, PrometheusError, selector
from .summary import CONTRACT, SCHEMA, SETTINGS_ORDER

# Every BENCH_* variable's default (scenarios/contract.json): what an empty one in a TestRun means.
VARIABLE_DEFAULTS = {v["name"]: v["default"] for v in CONTRACT["variables"]["list"]}
VALUES_KEY_DEFAULTS = {v["valuesKey"]: v["default"] for v in CONTRACT["variables"]["list"] if v["valuesKey"]}

RUN_ID = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")  # charts/bench values.schema.json
DURATION = re.compile(r"^(?:([0-9]+(?:\.[0-9]+)?)h)?(?:([0-9]+(?:\.[0-9]+)?)m(?!s))?(?:([0-9]+(?:\.[0-9]+)?)s)?(?:([0-9]+)ms)?$")


class SettingsError(ValueError):
    """A settings source that cannot be read; the message names it and what is allowed."""


def parse_duration_s(text, where):
    """'180s', '3m', '1m30s', '500ms' or a number of seconds -> seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    m = DURATION.match(str(text or ""))
    if not text or not m or not any(m.groups()):
        raise SettingsError(f"{where} {text!r} is not a duration; expected e.g. 180s, 3m, 1m30s")
    h, mi, s, ms = (float(g) if g else 0.0 for g in m.groups())
    return h * 3600 + mi * 60 + s + ms / 1000


def settings_from_values(path):
    """The run's settings from the chart values (`helm get values RELEASE --all -o json`):
    (settings, scenario, controller)."""
    try:
        with open(path, encoding="utf-8") as f:
            values = json.load(f)
    except OSError as e:
        raise SettingsError(f"--values {path}: cannot read: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise SettingsError(f"--values {path}: not JSON ({e.msg}); write it with "
                            "`helm get values RELEASE --all -o json`") from e
    lt = values.get("loadtest") if isinstance(values, dict) else None
    if not isinstance(lt, dict) or "rate" not in lt:
        raise SettingsError(f"--values {path}: no loadtest.rate; expected the bench chart's values "
                            "(`helm get values RELEASE --all -o json`)")
    ingress = ((values.get("routes") or {}).get("ingress") or {})
    target = lt.get("target")
    tls = target == "ingress" and (str(lt.get("ingressUrl") or "").startswith("https:")
                                   or (not lt.get("ingressUrl") and bool((ingress.get("tls") or {}).get("enabled"))))
    def setting(key):
        """loadtest.<key>; empty = the scenario's default (the contract's: an entry script's own is only
        in its runners' summaries)."""
        node = lt
        for k in key.split("."):
            node = node.get(k) if isinstance(node, dict) else None
        if node is not None and node != "":
            return node
        text = VALUES_KEY_DEFAULTS.get(f"loadtest.{key}", "")
        return {"true": True, "false": False}.get(text, int(text) if text.isdigit() else (text or None))

    settings = {
        "target": target,
        "path": lt.get("path") or None,
        "rate": setting("rate"),
        "duration_s": parse_duration_s(setting("duration"), "loadtest.duration"),
        "connections": setting("connections"),
        "timeout_s": parse_duration_s(setting("timeout"), "loadtest.timeout") if setting("timeout") else None,
        "keepalive": setting("keepalive"),
        "tls": tls,
        "churn_pattern": setting("churn.pattern") if lt.get("scenario") == "dynamic" else None,
        "runner_parallelism": lt.get("parallelism"),
    }
    return settings, lt.get("scenario"), values.get("controller")


def _read_json(flag, path, hint=""):
    """The JSON document a FLAG names, or a SettingsError naming the flag, the file and the problem."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise SettingsError(f"{flag} {path}: cannot read: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise SettingsError(f"{flag} {path}: not JSON ({e.msg}){hint}") from e


def settings_from_testrun(path, testid):
    """The run's settings from its k6-operator TestRun as JSON (`kubectl get testrun NAME -o json`;
    the matrix runner saves it when the run starts): the runner env the chart rendered, the way
    scenarios/lib/config.js reads it. (settings, scenario, controller)."""
    doc = _read_json("--testrun", path, "; write it with kubectl get testrun NAME -o json")
    items = doc.get("items", [doc]) if isinstance(doc, dict) else []
    testruns = [i for i in items if isinstance(i, dict) and i.get("kind") == "TestRun"]
    if not testruns:
        raise SettingsError(f"--testrun {path}: no TestRun object in it")
    spec = testruns[0].get("spec") or {}
    args = str(spec.get("arguments") or "").split(" ")
    tags = dict(args[i + 1].split("=", 1) for i, a in enumerate(args[:-1]) if a == "--tag" and "=" in args[i + 1])
    if tags.get("testid") != testid:
        raise SettingsError(f"--testrun {path}: run id {tags.get('testid')!r}, not {testid!r}")
    env = {e.get("name"): e.get("value") for e in (spec.get("runner") or {}).get("env") or [] if isinstance(e, dict)}
    scenario = os.path.splitext(os.path.basename(str((spec.get("script") or {}).get("localFile") or "")))[0] or None
    target_url = env.get("BENCH_TARGET_URL") or None
    environment = None
    if env.get("BENCH_ENVIRONMENT"):
        try:
            environment = json.loads(env["BENCH_ENVIRONMENT"])
        except json.JSONDecodeError as e:
            raise SettingsError(f"--testrun {path}: BENCH_ENVIRONMENT is not JSON ({e.msg})") from e

    def setting(name):
        """The variable's value; empty = the scenario's default, which the chart leaves to the script:
        the contract's (an entry script's own default is only in its runners' summaries)."""
        return env.get(name) or VARIABLE_DEFAULTS.get(name) or None

    def number(name):
        v = setting(name)
        return float(v) if v is not None else None

    settings = {
        "target_url": target_url,
        "path": env.get("BENCH_PATH") or None,
        "rate": number("BENCH_RATE"),
        "duration_s": parse_duration_s(setting("BENCH_DURATION"), "BENCH_DURATION") if setting("BENCH_DURATION") else None,
        "connections": int(number("BENCH_CONNECTIONS")) if number("BENCH_CONNECTIONS") is not None else None,
        "timeout_s": parse_duration_s(setting("BENCH_TIMEOUT"), "BENCH_TIMEOUT") if setting("BENCH_TIMEOUT") else None,
        "keepalive": setting("BENCH_KEEPALIVE") != "false",
        "tls": bool(target_url and target_url.startswith("https:")),
        "churn_pattern": setting("BENCH_CHURN_PATTERN") if scenario == "dynamic" else None,
        "environment": environment,
    }
    if settings["rate"] is not None and settings["rate"].is_integer():
        settings["rate"] = int(settings["rate"])
    return settings, scenario, tags.get("controller")


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


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="make results",
        description="Merge every k6 runner of one run from Prometheus into one bench.summary/v1 "
                    "(OUT/summary.json) and write its report (OUT/report.html, report.md, report.json).",
        epilog="Exit status: 0 written, 1 the run failed its budgets (only with --fail-on-verdict), "
               "2 bad input or no such run in Prometheus.")
    p.add_argument("--prometheus", required=True, metavar="URL",
                   help="Prometheus with the run's remote-write series, e.g. http://127.0.0.1:9090 "
                        "(kubectl port-forward svc/<prometheus> 9090)")
    p.add_argument("--list", action="store_true", help="print the run ids Prometheus holds, then exit")
    p.add_argument("--testid", metavar="ID", help="the run id (loadtest.runId, the TestRun's bench/testid label)")
    p.add_argument("--out", metavar="DIR", help="output folder (created)")
    p.add_argument("--testrun", metavar="FILE", help="the run's TestRun as JSON: kubectl get testrun NAME -o json")
    p.add_argument("--values", metavar="FILE", help="the chart values as JSON: helm get values RELEASE --all -o json")
    p.add_argument("--runner-summary", action="append", default=[], metavar="FILE",
                   help="a runner's own summary.json (settings, environment); repeatable")
    p.add_argument("--rate", type=float, metavar="REQ_PER_S", help="the run's target rate (all runners)")
    p.add_argument("--duration", metavar="DURATION", help="the run's load duration, e.g. 180s")
    p.add_argument("--lookback", type=float, default=DEFAULT_LOOKBACK_S, metavar="SECONDS",
                   help="how far back to look for the run (default: %(default)g)")
    p.add_argument("--wait-settled", type=float, default=0, metavar="SECONDS",
                   help="first wait (at most this long) until the run's request count in Prometheus "
                        "reads the same twice, 2 s apart: right after a run, the last remote writes")
    p.add_argument("--budget", action="append", default=[], metavar="KEY=VALUE", help="as for the report")
    p.add_argument("--fail-on-verdict", action="store_true", help="exit 1 when the run does not PASS")
    args = p.parse_args(argv)
    if not args.list:
        for name in ("testid", "out"):
            if not getattr(args, name):
                p.error(f"--{name} is required (or --list)")
        if not RUN_ID.match(args.testid):
            p.error(f"--testid {args.testid!r} is not a run id: letters, digits, '-', '_', '.', at most 63")
    if args.rate is not None and args.rate <= 0:
        p.error(f"--rate {args.rate:g} must be a positive number of requests per second")
    return args


def collect_settings(args):
    settings, scenario, controller = {}, None, None
    for path in args.runner_summary:
        s, sc, ctl = settings_from_runner_summary(path, args.testid)
        settings.update(s)
        scenario, controller = scenario or sc, controller or ctl
    if args.testrun:
        s, sc, ctl = settings_from_testrun(args.testrun, args.testid)
        settings.update({k: v for k, v in s.items() if v is not None})
        scenario, controller = sc or scenario, ctl or controller
    if args.values:
        s, sc, ctl = settings_from_values(args.values)
        settings.update({k: v for k, v in s.items() if v is not None})
        scenario, controller = sc or scenario, ctl or controller
    if args.rate is not None:
        settings["rate"] = int(args.rate) if args.rate.is_integer() else args.rate
    if args.duration is not None:
        settings["duration_s"] = parse_duration_s(args.duration, "--duration")
    # the keys of a runner's settings (scenarios/interfaces.md): null when no source gave them
    for key in SETTINGS_ORDER:
        settings.setdefault(key, None)
    return settings, scenario, controller


def wait_settled(prom, testid, timeout_s):
    """Waits until the run's request total in Prometheus reads the same twice, 2 s apart."""
    query = f"sum(last_over_time(k6_http_reqs_total{selector(testid)}[{int(DEFAULT_LOOKBACK_S)}s]))"
    deadline = time.time() + timeout_s
    last = None
    while time.time() < deadline:
        result = prom.query(query, time.time())
        now = result[0]["value"][1] if result else None
        if now is not None and now == last:
            return
        last = now
        time.sleep(2)
    raise MergeError(f"the request count of run {testid} in Prometheus did not settle within {timeout_s:g} s "
                     f"(last read: {last}); is the run still going?")


def main(argv):
    args = parse_args(argv)
    try:
        prom = Prometheus(args.prometheus)
        if args.list:
            for testid in prom.testids(args.lookback):
                print(testid)
            return 0
        settings, scenario, controller = collect_settings(args)
        if args.wait_settled > 0:
            wait_settled(prom, args.testid, args.wait_settled)
        summary = merge_run(prom, args.testid, settings, args.lookback, scenario, controller)
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
    from .__main__ import main as report_main
    report_args = ["--out", args.out, "--prometheus", args.prometheus, "--prometheus-lookback", f"{args.lookback:g}"]
    for b in args.budget:
        report_args += ["--budget", b]
    if args.fail_on_verdict:
        report_args.append("--fail-on-verdict")
    return report_main(report_args + [path])

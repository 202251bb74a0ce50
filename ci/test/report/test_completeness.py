"""A merged result knows when Prometheus lacks part of a run: real k6 runners (scenarios/static.js)
against nginx on 127.0.0.1, each remote-writing into the real Prometheus through its own proxy
(harness/rwproxy.py) that fails its pushes in the windows a case gives, as a network cut on the
runner's own traffic would; Prometheus itself is untouched. Every case is compared with the
runners' own summaries, which k6 computes from every sample:
- control: nothing lost, the merge complete;
- the final push lost (push interval 5 s), the end-of-run record delivered once the cut heals: the
  totals and the latency taken from the record, exact, the run complete;
- the final push lost and the record refused: the run incomplete, its verdicts withheld, exit 3
  (0 with --allow-partial), the runner's own summary (--runner-summary) named as disagreeing;
- a mid-run cut on one of two runners while the target answered 503 only then (an error class
  seen only in the cut): the counts restored from that runner's record, the merged percentiles of
  two runners unknown (incomplete: latency), the error budget still judged;
- two runners started, one never reached Prometheus: named as missing."""
import json
import os
import subprocess
import threading
import time

import pytest

from conftest import ROOT
from harness.rwproxy import RemoteWriteProxy, Window
from harness.servers import start_backend_nginx, wait_until

INF = float("inf")
MARKED_AS_FAILED = 110  # k6's exit code for a run marked as failed
# Each case: (runners: [(proxy windows or None for a direct push, push interval)], k6 settings).
# Windows are seconds after the runner's first push. With a 5 s interval a 12 s run pushes at about
# 0, 5 and 7.5 s (the final flush): a cut from 6 s loses only the final push.
CASES = {
    "control": ([([], "5s")], {"BENCH_RATE": 100, "BENCH_DURATION": "12s"}),
    "final-push-recovered": ([([Window(6, 16, 503)], "5s")], {"BENCH_RATE": 100, "BENCH_DURATION": "12s"}),
    "final-push-refused": ([([Window(6, INF, 400)], "5s")], {"BENCH_RATE": 100, "BENCH_DURATION": "12s"}),
    "runner-missing": ([([], "1s"), ([Window(0, INF, 400)], "1s")], {"BENCH_RATE": 100, "BENCH_DURATION": "6s"}),
}
# The mid-run case: pushes of runner 1 fail from 0.5 s to 5.5 s after its first; the target answers
# 503 from 1.5 s to 3 s only.
MID_CUT, MID_FLAP = Window(0.5, 5.5, 503), (1.5, 3.0)


def start_runners(prom, work, testid, targets, env):
    """Real k6 processes splitting one run as k6-operator does (execution segments, instance_id),
    each pushing through its own proxy (or straight to Prometheus). Returns [(Popen, dir, proxy)]."""
    n = len(targets)
    sequence = ",".join(["0"] + [f"{i}/{n}" for i in range(1, n + 1)])
    started = []
    for i, (target, windows, interval) in enumerate(targets, 1):
        d = work / "runs" / testid / f"runner-{i}"
        d.mkdir(parents=True)
        proxy = RemoteWriteProxy(prom.url, windows).start() if windows is not None else None
        full = {**os.environ, **{k: str(v) for k, v in env.items()}, "BENCH_TARGET_URL": target,
                "BENCH_TESTID": testid, "BENCH_SUMMARY_DIR": str(d), "BENCH_CONNECTIONS": "20",
                "K6_PROMETHEUS_RW_SERVER_URL": f"{(proxy.url if proxy else prom.url)}/api/v1/write",
                "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM": "true", "K6_PROMETHEUS_RW_PUSH_INTERVAL": interval}
        log = open(d / "k6.log", "w")
        p = subprocess.Popen(["k6", "run", "--quiet", "--no-color", "-o", "experimental-prometheus-rw",
                              "--tag", f"testid={testid}", "--tag", "controller=none", "--tag", f"instance_id={i}",
                              "--execution-segment", f"{i - 1}/{n}:{i}/{n}", "--execution-segment-sequence", sequence,
                              str(ROOT / "scenarios/static.js")], stdout=log, stderr=subprocess.STDOUT, env=full)
        started.append((p, d, proxy, log))
    return started


def finish(started):
    """Waits for every runner; returns each one's own summary (what k6 counted from every sample)."""
    summaries = []
    for p, d, proxy, log in started:
        rc = p.wait()
        log.close()
        if proxy:
            proxy.stop()
        own = json.loads((d / "summary.json").read_text())
        # a runner whose end-of-run record did not arrive is marked as failed (110) unless a threshold failed it
        want = (0, 99) if (own.get("end_record") or {}).get("delivered", True) else (MARKED_AS_FAILED, 99)
        assert rc in want, f"k6 in {d} exited {rc}, not {want}:\n{(d / 'k6.log').read_text()[-3000:]}"
        summaries.append((d / "summary.json", own))
    return summaries


@pytest.fixture(scope="session")
def flapping(servers, work):
    return start_backend_nginx(servers, work / "nginx-flap", flap_mode="errors")


@pytest.fixture(scope="session")
def cut_runs(prometheus, nginx, flapping, work):
    """Every case at once (each its own run id and proxies): {case: [(summary path, summary)]}."""
    runs = {}
    for case, (runners, env) in CASES.items():
        runs[case] = start_runners(prometheus, work, f"cut-{case}", [(nginx.url, w, i) for w, i in runners], env)
    runs["mid-run"] = start_runners(prometheus, work, "cut-mid-run",
                                    [(flapping.url, [MID_CUT], "1s"), (flapping.url, None, "1s")],
                                    {"BENCH_RATE": 100, "BENCH_DURATION": "10s"})
    p, d, proxy, _ = runs["mid-run"][0]
    try:
        wait_until(lambda: proxy.first is not None or p.poll() is not None, 120, "the mid-run runner's first push")
    except TimeoutError:
        pytest.fail(f"no push from the mid-run runner in 120 s; its log:\n{(d / 'k6.log').read_text()[-3000:]}")
    assert proxy.first is not None, f"the mid-run runner exited {p.poll()}:\n{(d / 'k6.log').read_text()[-3000:]}"
    time.sleep(max(0.0, proxy.first + MID_FLAP[0] - time.monotonic()))
    flapping.flag.touch()
    time.sleep(max(0.0, proxy.first + MID_FLAP[1] - time.monotonic()))
    flapping.flag.unlink()
    return {case: finish(started) for case, started in runs.items()}


def merge(report, prometheus, out, case, *args):
    """`results` of the case once Prometheus' request count settled; (exit status, output, summary)."""
    report.prom(prometheus.url, "settled", f"cut-{case}")
    r = report("results", "--testid", f"cut-{case}", "--prometheus", prometheus.url, "--out", out / f"cut-{case}",
               "--budget", "errors=0", "--budget", "p99=10s", "--wait-settled", "10", *map(str, args))
    path = out / f"cut-{case}" / "summary.json"
    s = json.loads(path.read_text()) if path.exists() else None
    if s:  # the figures, for the log of a passing run too (pytest -rP)
        print(f"{case} {' '.join(map(str, args))}: exit {r.returncode}, requests {s['requests']['total']}, errors "
              f"{sum(s['errors'].values())}, p99 {s['latency_ms']['p99']} ms; runners (status, series, record): "
              + ", ".join(f"{x['instance_id']} ({x['status']}, {x['requests_series']}, {x['requests_end_record']})"
                          for x in s["merge"]["completeness"]["runners"]))
    return r.returncode, r.stdout + r.stderr, s


def own_figures(summaries):
    return ", ".join(f"{s['requests']['total']} requests, {sum(s['errors'].values())} errors, p99 "
                     f"{s['latency_ms']['p99']} ms" for _, s in summaries)


def own_total(summaries, key="total"):
    return sum(s["requests"][key] for _, s in summaries)


def own_errors(summaries, cls):
    return sum(s["errors"][cls] for _, s in summaries)


def verdict(out, case):
    return json.loads((out / f"cut-{case}" / "report.json").read_text())["runs"][0]


def test_control_is_complete_and_exact(report, prometheus, cut_runs, out):
    rc, text, s = merge(report, prometheus, out, "control")
    print("runner's own:", own_figures(cut_runs["control"]))
    assert rc == 0, text
    assert s["incomplete"] is None and s["merge"]["completeness"]["complete"], s["merge"]["completeness"]
    assert s["requests"]["total"] == own_total(cut_runs["control"]), text
    (_, own), = cut_runs["control"]
    assert own["end_record"] == {"delivered": True, "attempts": 1, "error": None, "instance_id": "1"}, own["end_record"]
    assert [r["status"] for r in s["merge"]["completeness"]["runners"]] == ["complete"]


def test_a_lost_final_push_is_recovered_from_the_end_record(report, prometheus, cut_runs, out):
    (_, own), = cut_runs["final-push-recovered"]
    assert own["end_record"]["delivered"] and own["end_record"]["attempts"] > 1, own["end_record"]
    rc, text, s = merge(report, prometheus, out, "final-push-recovered")
    print("runner's own:", own_figures(cut_runs["final-push-recovered"]))
    assert rc == 0, text
    runner, = s["merge"]["completeness"]["runners"]
    # the cut cost the series the final push: the record has more, and the merge takes it
    assert runner["status"] == "recovered" and runner["requests_series"] < runner["requests_end_record"], runner
    assert s["requests"]["total"] == own["requests"]["total"] and s["errors"] == own["errors"], text
    assert s["latency_ms"]["p99"] == own["latency_ms"]["p99"], (s["latency_ms"], own["latency_ms"])
    assert s["incomplete"] is None, s["incomplete"]
    assert any("taken from the record" in n for n in s["merge"]["notes"]), s["merge"]["notes"]


def test_a_lost_final_push_without_its_record_is_refused(report, prometheus, cut_runs, out):
    (path, own), = cut_runs["final-push-refused"]
    assert own["end_record"]["delivered"] is False and "HTTP 400" in own["end_record"]["error"], own["end_record"]
    assert "end-of-run record did not reach Prometheus" in (path.parent / "k6.log").read_text()
    rc, text, s = merge(report, prometheus, out, "final-push-refused")
    print("runner's own:", own_figures(cut_runs["final-push-refused"]))
    assert rc == 3, text
    assert s["incomplete"]["runners"] == ["1"] and "runner 1 delivered no end-of-run record" in text, text
    assert s["requests"]["total"] < own["requests"]["total"], "the series were expected short of the final push"
    v = verdict(out, "final-push-refused")
    assert v["verdict"] == "INCOMPLETE" and any("withheld" in why for why in v["reasons"]), v
    # the partial result on request, and the runner's own summary named where it disagrees
    rc, text, s = merge(report, prometheus, out, "final-push-refused", "--allow-partial", "--runner-summary", path)
    assert rc == 0, text
    assert f"runner 1 disagrees with its own summary {path}: requests {own['requests']['total']}" in text, text


def test_a_mid_run_cut_hiding_an_error_class_is_restored_and_the_percentiles_withheld(report, prometheus, cut_runs, out):
    runs = cut_runs["mid-run"]
    assert runs[0][1]["errors"]["http_5xx"] > 0, "runner 1 saw no 503: the flap missed its load"
    rc, text, s = merge(report, prometheus, out, "mid-run")
    print("runners' own:", own_figures(runs))
    assert rc == 3, text
    one, two = s["merge"]["completeness"]["runners"]
    assert one["status"] == "recovered" and one["gaps"], one
    assert two["status"] == "complete", two
    assert s["requests"]["total"] == own_total(runs), text
    assert s["errors"]["http_5xx"] == own_errors(runs, "http_5xx"), (s["errors"], [r["errors"] for _, r in runs])
    assert s["incomplete"]["affects"] and "latency_ms" in s["incomplete"]["affects"], s["incomplete"]
    v = verdict(out, "mid-run")
    # the error count is whole again: its budget fails the run; the p99 budget is withheld
    assert v["verdict"] == "FAIL" and any(r.startswith("errors = ") for r in v["reasons"]), v
    assert any(r.startswith("p99 withheld") for r in v["reasons"]), v


def test_a_runner_that_never_reached_prometheus_is_named(report, prometheus, cut_runs, out):
    rc, text, s = merge(report, prometheus, out, "runner-missing")
    assert rc == 3, text
    statuses = {r["instance_id"]: r["status"] for r in s["merge"]["completeness"]["runners"]}
    assert statuses == {"1": "complete", "2": "missing"}, statuses
    assert "runner 2 of 2 started but wrote nothing" in text, text
    assert s["requests"]["total"] == cut_runs["runner-missing"][0][1]["requests"]["total"]


# ---- the verdicts and warnings of an incomplete summary (no Prometheus needed) ----

def _run(incomplete=None, dropped=0, achieved=123.8, errors=64):
    from benchreport.summary import Run
    return Run(source="s.json", testid="t", scenario="static", controller="none", settings={"rate": 200},
               requests={"total": 5572, "rate_target": 200, "rate_achieved": achieved, "dropped_iterations": dropped},
               latency_ms={"p99": 138.25}, errors={"timeout": errors}, label="t", incomplete=incomplete or {})


def _judge(run, *budgets):
    from benchreport.verdict import judge, parse_budgets
    return judge(run, parse_budgets(list(budgets)))


SHORT_LATENCY = {"affects": ["latency_ms"], "findings": ["latency: ..."], "runners": ["1"]}
SHORT_COUNTS = {"affects": ["errors", "requests", "dropped_iterations", "latency_ms"],
                "findings": ["runner 1 delivered no end-of-run record"], "runners": ["1"]}


def test_the_rate_line_says_samples_may_be_missing_when_nothing_was_dropped():
    from benchreport.verdict import comparability_warnings
    line, = [w for w in comparability_warnings([_run()]) if "req/s" in w]
    assert line.endswith("with no iteration dropped: the target did not get the load, or samples are missing"), line
    line, = [w for w in comparability_warnings([_run(dropped=40)]) if "req/s" in w]
    assert "samples are missing" not in line, line


def test_an_incomplete_run_has_its_findings_among_the_warnings():
    from benchreport.verdict import comparability_warnings
    assert "t: incomplete: runner 1 delivered no end-of-run record" in comparability_warnings([_run(SHORT_COUNTS)])


def test_a_budget_on_a_short_figure_is_withheld():
    v = _judge(_run(SHORT_LATENCY, errors=0), "p99=150ms", "errors=0")
    assert v.status == "INCOMPLETE" and v.reasons == ["p99 withheld (budget 150 ms): samples are missing"], v
    # the same run complete: judged
    assert _judge(_run(errors=0), "p99=150ms", "errors=0").status == "PASS"


def test_a_short_count_already_over_its_budget_fails_and_a_share_is_withheld():
    v = _judge(_run(SHORT_COUNTS), "errors=10", "errors.timeout=1%")
    assert v.status == "FAIL", v
    assert v.reasons[0] == "errors >= 64 > 10 (at least: samples are missing)", v
    assert v.reasons[1].startswith("errors.timeout withheld"), v
    assert _judge(_run(SHORT_COUNTS, errors=3), "errors=10").status == "INCOMPLETE"


def test_a_run_without_instance_ids_is_one_runner(report, prometheus, real_runs, out):
    """A runner started by hand (no k6-operator: no instance_id tag) is the run's one runner, not a
    missing runner 1 of 1."""
    report.prom(prometheus.url, "settled", "report-a")
    r = report("results", "--testid", "report-a", "--prometheus", prometheus.url, "--out", out / "untagged")
    assert r.returncode == 0, r.stdout + r.stderr
    s = json.loads((out / "untagged" / "summary.json").read_text())
    assert [(x["instance_id"], x["status"]) for x in s["merge"]["completeness"]["runners"]] == [("untagged", "complete")]
    assert s["requests"]["total"] == real_runs["a"].summary["requests"]["total"]

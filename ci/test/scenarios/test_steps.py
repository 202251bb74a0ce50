"""The stepped scenarios against nginx: max-rps (one runner and two, as k6-operator starts them with
parallelism 2) and calibrate (the runner measured against the backend Service)."""
import json
from pathlib import Path

import pytest

from harness import k6 as k6run

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
RATE_HELD_SHARE = json.loads((SCENARIOS / "contract.json").read_text())["verdicts"]["rateHeldShare"]

STEPS = dict(BENCH_RATE=100, BENCH_DURATION="10s", BENCH_CONNECTIONS=10, BENCH_TIMEOUT="500ms")


@pytest.fixture(scope="module")
def max_rps(k6, servers):
    return k6("max-rps", "max-rps.js", dict(STEPS, BENCH_TARGET_URL=servers.http))


def test_max_rps_exit_0_ten_ascending_steps_up_to_bench_rate(max_rps):
    assert max_rps.rc == 0, max_rps.stderr[-3000:]
    assert [s["rate_target"] for s in max_rps.summary["max_rps"]["steps"]] == list(range(10, 101, 10))


def test_max_rps_each_steps_count_near_its_rate(max_rps):
    steps = max_rps.summary["max_rps"]["steps"]
    assert all(s["rate_achieved"] >= 0.9 * s["rate_target"] for s in steps), steps


def test_max_rps_knee_is_the_highest_step_within_budget_at_least_half_the_top_rate(max_rps):
    m = max_rps.summary["max_rps"]
    assert m["knee_rate"] >= 50 and m["knee_rate"] == max(s["rate_target"] for s in m["steps"] if s["ok"]), m


def test_max_rps_the_table_lists_the_steps_and_the_knee(max_rps):
    assert any(line.startswith("knee: ") for line in max_rps.table.splitlines())


# Two runners: each judges its own half of every step (judged against the whole step's rate, every
# step would fail and the knee would be null).
SEGMENTS = {"0_1_2": "0:1/2", "1_2_1": "1/2:1"}


@pytest.fixture(scope="module")
def max_rps_segments(servers, work):
    procs = {name: k6run.start(work / f"maxrps-{name}", f"maxrps-{name}", SCENARIOS / "max-rps.js",
                               dict(STEPS, BENCH_TARGET_URL=servers.http, BENCH_TESTID="t-maxrps-segments"),
                               ["--execution-segment", seg, "--execution-segment-sequence", "0,1/2,1"])
             for name, seg in SEGMENTS.items()}
    return {name: k6run.Run(name, work / f"maxrps-{name}", p.wait(300)) for name, p in procs.items()}


def test_max_rps_2_runners_both_exit_0(max_rps_segments):
    assert {n: r.rc for n, r in max_rps_segments.items()} == {n: 0 for n in SEGMENTS}


@pytest.mark.parametrize("name", list(SEGMENTS))
def test_max_rps_2_runners_its_share_of_each_step_a_knee_found(max_rps_segments, name):
    s = max_rps_segments[name].summary
    last = s["max_rps"]["steps"][-1]
    assert s["settings"]["runner_share"] == 0.5 and last["rate_target"] == 50 and last["rate_target_run"] == 100
    assert s["max_rps"]["knee_rate"] is not None and s["max_rps"]["knee_rate"] >= 25, s["max_rps"]


# ---- calibrate.js: BENCH_URL_CLUSTERIP wins over BENCH_TARGET_URL (here a closed port: a request
# there would fail the run) ----

@pytest.fixture(scope="module")
def calibrate(k6, servers):
    return k6("calibrate", "calibrate.js", dict(BENCH_URL_CLUSTERIP=servers.http, BENCH_TARGET_URL=servers.url("closed"),
                                                BENCH_RATE=1000, BENCH_DURATION="10s", BENCH_CONNECTIONS=20,
                                                BENCH_TIMEOUT="500ms"))


def test_calibrate_exit_0_ten_steps_up_to_bench_rate_against_bench_url_clusterip(calibrate, servers):
    assert calibrate.rc == 0, calibrate.stderr[-3000:]
    s = calibrate.summary
    assert [st["rate_target"] for st in s["calibrate"]["steps"]] == list(range(100, 1001, 100))
    assert s["settings"]["target_url"] == servers.http and s["settings"]["path"] == "/bytes/1k"


def test_calibrate_every_step_has_its_own_runner_lag_sample(calibrate):
    steps = calibrate.summary["calibrate"]["steps"]
    assert all(isinstance(st["lag_p95_ms"], (int, float)) and isinstance(st["lag_p99_ms"], (int, float))
               for st in steps), steps


def test_calibrate_verdicts_ceiling_and_limited_by_agree_with_the_steps(calibrate):
    # Recomputed from the steps (an implementation apart from lib/knee.js): each step's verdict, the
    # ceiling = the highest step held, at least half the top rate against local nginx, and
    # limited_by = what broke the first failed step above it (None when none did).
    c = calibrate.summary["calibrate"]
    for st in c["steps"]:
        held = (st["dropped_iterations"] == 0 and st["rate_achieved"] >= RATE_HELD_SHARE * st["rate_target"]
                and not st["cpu_bound"])
        assert st["ok"] == held, st
    ceiling = max((st["rate_target"] for st in c["steps"] if st["ok"]), default=None)
    assert c["ceiling_rate"] == ceiling and ceiling >= 500, c
    broke = next((st for st in c["steps"] if not st["ok"] and st["rate_target"] > ceiling), None)
    want = None if broke is None else "runner-cpu" if broke["cpu_bound"] else "connections-or-target"
    assert c["limited_by"] == want, c


def test_calibrate_summary_count_equals_what_nginx_served_on_bytes_1k(calibrate):
    served = sum(1 for r in calibrate.access if r.from_k6 and r.uri == "/bytes/1k")
    assert calibrate.summary["requests"]["total"] == served

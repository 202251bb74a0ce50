"""The warm-up (BENCH_WARMUP, chart loadtest.warmup): a real static.js run against nginx sends the
warm-up's requests at the target rate, then the measured duration's, and its summary counts only the
latter (nginx's access log counts both); `k6 inspect`, the way the k6-operator initializer runs it,
shows the plan of every entry script: a warm-up scenario before the measured load and the churn, on
the same VUs, or a refusal naming BENCH_WARMUP for the scripts scenarios/contract.json lists."""
import concurrent.futures
import json
import subprocess

import pytest

from conftest import SCENARIOS

CONTRACT = json.loads((SCENARIOS / "contract.json").read_text())
WARMUP = CONTRACT["warmup"]
SCRIPTS = sorted(p.stem for p in SCENARIOS.glob("*.js"))
# What a script needs besides the warm-up to get past its own checks at init.
NEEDS = {"tls-handshakes": ["-e", "BENCH_TARGET_URL=https://127.0.0.1:8443"],
         "paths": ["-e", "BENCH_URL_CLUSTERIP=http://127.0.0.1:8080"]}


# ---- a real run: 1 s of warm-up, then 2 s measured, at 100 req/s ----

@pytest.fixture(scope="module")
def warmed(k6, servers):
    return k6("warmup", "static.js", dict(BENCH_TARGET_URL=servers.http, BENCH_RATE=100, BENCH_WARMUP="1s",
                                          BENCH_DURATION="2s", BENCH_CONNECTIONS=20))


def test_warmup_run_exit_0_and_the_setting_recorded(warmed):
    assert warmed.rc == 0, warmed.stderr[-3000:]
    assert (warmed.summary["settings"]["warmup_s"], warmed.summary["settings"]["duration_s"]) == (1, 2)


def test_warmup_requests_sent_at_the_rate_and_counted_apart(warmed):
    r = warmed.summary["requests"]
    assert 95 <= r["warmup_requests"] <= 101 and 196 <= r["total"] <= 202 and r["dropped_iterations"] == 0, r
    assert r["rate_achieved"] == round(r["total"] / 2, 1), r


def test_warmup_nginx_served_both_the_summary_counts_only_the_measured(warmed):
    """nginx served every request k6 counted, warm-up and measured; the summary's total is the
    measured ones only. A warm-up request still in flight at the switch is cut short: it may reach
    nginx without an answer k6 counts (at most one per connection)."""
    served = sum(1 for r in warmed.access if r.from_k6)
    r = warmed.summary["requests"]
    assert 0 <= served - (r["total"] + r["warmup_requests"]) <= 20, (served, r)
    assert served > r["total"] + 90, (served, r)


def test_warmup_latency_and_errors_cover_the_measured_requests_only(warmed):
    s = warmed.summary
    assert sum(s["errors"].values()) == 0 and s["latency_ms"]["p50"] is not None, s


def test_warmup_the_table_says_it(warmed):
    assert f"warm-up 1 s before it at the same rate: {warmed.summary['requests']['warmup_requests']} requests, " \
           "left out of every figure" in warmed.table


# ---- the plan of every entry script, as the initializer sees it (k6 inspect) ----

def inspect(script, warmup):
    """`k6 inspect --execution-requirements` of SCRIPT with BENCH_WARMUP=2s (or none): (exit, output)."""
    cmd = ["k6", "inspect", "--execution-requirements", *NEEDS.get(script, []),
           *(["-e", "BENCH_WARMUP=2s"] if warmup else []), str(SCENARIOS / f"{script}.js")]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    return r.returncode, r.stdout


# Every script with a warm-up (the refusals), and two without (the plans compared): about 6 CPU-seconds
# each, two at a time.
PLAIN = ("static", "dynamic")


@pytest.fixture(scope="module")
def plans():
    """(script, warm-up?) -> (exit, output) of k6 inspect."""
    keys = [(s, True) for s in SCRIPTS] + [(s, False) for s in PLAIN]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(keys, pool.map(lambda k: inspect(*k), keys)))


def test_contract_names_scripts_that_exist():
    assert set(WARMUP["refusedBy"]) <= set(SCRIPTS), sorted(set(WARMUP["refusedBy"]) - set(SCRIPTS))


@pytest.mark.parametrize("script", SCRIPTS)
def test_warmup_refused_exactly_by_the_contracts_list(plans, script):
    rc, output = plans[script, True]
    if script in WARMUP["refusedBy"]:
        assert rc != 0 and f'invalid BENCH_WARMUP=\\"2s\\": {script} takes no warm-up' in output, output
    else:
        assert rc == 0, f"{script} refused a warm-up but scenarios/contract.json warmup.refusedBy does not list it:\n{output}"


def options_of(output):
    return json.loads(output[output.index("{"):])


@pytest.mark.parametrize("script", PLAIN)
def test_warmup_plan_before_the_load_on_the_same_vus(plans, script):
    """The warm-up scenario runs from 0 to the measured load's start (the churn starts with the load),
    with no graceful stop, so k6 hands its VUs on: the run needs no more VUs than without it, and
    lasts the warm-up longer."""
    warm, cold = options_of(plans[script, True][1]), options_of(plans[script, False][1])
    s = warm["scenarios"]
    w = s[WARMUP["scenario"]]
    assert (w["startTime"], w["duration"], w["gracefulStop"], w["tags"]["role"]) == ("0s", "2s", "0s", WARMUP["role"]), w
    assert (w["executor"], w["rate"], w["preAllocatedVUs"]) == (s["load"]["executor"], s["load"]["rate"],
                                                                s["load"]["preAllocatedVUs"]), (w, s["load"])
    assert s["load"]["startTime"] == "2s" and s["load"]["tags"]["role"] == "load", s["load"]
    if "churn" in s:
        assert s["churn"]["startTime"] == "2s", s["churn"]
    assert warm["maxVUs"] == cold["maxVUs"], (warm["maxVUs"], cold["maxVUs"])
    assert warm["totalDuration"] != cold["totalDuration"], (warm["totalDuration"], cold["totalDuration"])

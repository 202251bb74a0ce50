"""The runner refuses, in setup and before any load, a script that plans more VUs at once than its
Go memory limit holds (scenarios/lib/memory-plan.js), naming each scenario's VUs; the same script
with a plan that fits runs. GOMEMLIMIT gives the limit, as the chart sets it (loadtest.runner.gc)."""
import re

K6_SCRIPT_EXCEPTION = 107  # k6's exit code when setup() throws


def run(k6, servers, name, max_connections):
    return k6(name, "static.js", dict(BENCH_TARGET_URL=servers.http, BENCH_RATE=20, BENCH_DURATION="1s",
                                      BENCH_CONNECTIONS=20, BENCH_MAX_CONNECTIONS=max_connections, GOMEMLIMIT="300MiB"))


def test_a_plan_beyond_the_memory_limit_is_refused_before_the_load(k6, servers):
    # 120 MB + 0.37 MB x (2,000 load VUs + the lag probe's) > 860 MB > 300 MiB
    r = run(k6, servers, "memory-plan-refused", 2000)
    assert r.rc == K6_SCRIPT_EXCEPTION, f"{r}: {r.stderr[-1500:]}"
    m = re.search(r"the script plans (\d+) VUs at once on this runner \(load 2000, runner_lag (\d+)\): about (\d+) MB", r.stderr)
    assert m and int(m[1]) == 2000 + int(m[2]) and int(m[3]) == -(-(120 * 100 + 37 * int(m[1])) // 100), r.stderr[-1500:]
    assert "above its memory limit of 300 MiB (GOMEMLIMIT)" in r.stderr, r.stderr[-1500:]
    assert not [a for a in r.access if a.from_k6], "the load started although its plan was refused"


def test_a_plan_that_fits_runs(k6, servers):
    # 120 MB + 0.37 MB x (100 load VUs + the lag probe's) < 300 MiB
    r = run(k6, servers, "memory-plan-fits", 100)
    assert r.rc == 0, f"{r}: {r.stderr[-1500:]}"
    assert r.summary["requests"]["total"] > 0

"""Every error class provoked for real (scenarios/tests/error_server.py and nginx), what k6's codes
alone get wrong compared with the servers' own logs, runs that must stop in setup, and bad
configuration stopping `k6 inspect` the way the k6-operator initializer runs it."""
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import k6 as k6run
from harness.k6 import only_error_cause, only_error_class
from harness.procs import free_port, port_open, wait_until

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
SHORT = dict(BENCH_RATE=50, BENCH_DURATION="2s", BENCH_CONNECTIONS=10)


def total(run):
    return run.summary["requests"]["total"]


def assert_exit_status(run):
    """Errors are what these runs measure and fail no threshold: exit 0, or 99 exactly when the
    runner dropped iterations (their threshold; a busy machine's doing, counted in the summary)."""
    want = 99 if run.summary["requests"]["dropped_iterations"] > 0 else 0
    assert run.rc == want, f"exit {run.rc}, want {want}: {run.summary['requests']}\n{run.stderr[-3000:]}"


# ---- one class per misbehaviour ----

@pytest.fixture(scope="module")
def errored(k6, servers):
    """The runs of the error-class checks, each once (by name)."""
    runs = {}

    def get(name):
        if name not in runs:
            env = {
                "refused": dict(SHORT, BENCH_TARGET_URL=servers.url("refuse")),
                "stall": dict(SHORT, BENCH_TARGET_URL=servers.url("stall"), BENCH_RATE=20, BENCH_CONNECTIONS=20,
                              BENCH_TIMEOUT="300ms"),
                "reset": dict(SHORT, BENCH_TARGET_URL=servers.url("reset")),
                "tls": dict(SHORT, BENCH_TARGET_URL=servers.url("tls", "https")),
                "502": dict(SHORT, BENCH_TARGET_URL=servers.url("502")),
                "429": dict(SHORT, BENCH_TARGET_URL=servers.url("502"), BENCH_PATH="/too-many"),
            }[name]
            runs[name] = k6(f"err-{name}", "static.js", env)
        return runs[name]
    return get


@pytest.mark.parametrize("name, cls", [("refused", "connection"), ("stall", "timeout"), ("reset", "read"),
                                       ("tls", "connection"), ("502", "http_5xx"), ("429", "http_4xx")],
                         ids=["closed port -> connection", "stalled server -> timeout", "reset connection -> read",
                              "failed TLS handshake -> connection", "502 from a dead upstream -> http_5xx",
                              "429 -> http_4xx"])
def test_error_class(errored, name, cls):
    run = errored(name)
    assert_exit_status(run)
    assert only_error_class(run.summary, cls), (run.summary["requests"], run.summary["errors"])


def test_timeouts_last_about_bench_timeout(errored):
    p50 = errored("stall").summary["latency_ms"]["p50"]
    assert 299 <= p50 < 1000, p50


def test_5xx_count_equals_nginx_502_count(errored):
    run = errored("502")
    assert run.summary["errors"]["http_5xx"] == sum(1 for r in run.access if r.status == 502)


def test_text_table_shows_the_4xx_count(errored):
    assert re.search(r"^count +0 +0 +0 +0 +[1-9][0-9]* +0$", errored("429").table, re.M), errored("429").table


# ---- ground truth: a TLS handshake the server cuts (k6 says EOF or reset: a read error by code), a
# reset during connect, a request lost on a reused connection that Go's transport replays silently,
# Connection: close a server ignores. Each count is compared with the server's own log. ----

@pytest.fixture(scope="module")
def truth(k6, servers):
    """name -> the run against that error server, its events log cleared first."""
    runs = {}

    def get(mode, **env):
        if mode not in runs:
            servers.clear_events(mode)
            scheme = "https" if mode.startswith("tlscut") else "http"
            runs[mode] = k6(f"err-{mode}", "static.js", dict(SHORT, BENCH_TARGET_URL=servers.url(mode, scheme), **env))
        return runs[mode]
    return get


@pytest.mark.parametrize("how", ["fin", "rst"])
def test_tls_handshake_cut_is_a_connection_error(truth, how):
    run = truth(f"tlscut-{how}")
    assert_exit_status(run)
    assert only_error_class(run.summary, "connection"), (run.summary["errors"], run.summary["error_causes"])


def test_every_handshake_cut_with_fin_is_cause_tls_handshake(truth):
    run = truth("tlscut-fin")
    assert only_error_cause(run.summary, "connection", "tls_handshake"), run.summary["error_causes"]


def test_every_handshake_cut_with_rst_is_cause_tls_handshake_or_reset(truth):
    # an RST can reach the client's connect already: then it is a reset at connect, not a handshake
    c = truth("tlscut-rst").summary["error_causes"]["connection"]
    assert c["tls_handshake"] + c["reset"] == total(truth("tlscut-rst")) and c["tls_handshake"] > 0, c


@pytest.mark.parametrize("how", ["fin", "rst"])
def test_one_failure_per_cut_handshake(truth, servers, how):
    run = truth(f"tlscut-{how}")
    assert total(run) == servers.events(f"tlscut-{how}", "cut")


def test_reset_at_accept_is_a_connection_or_read_error_nothing_else(truth):
    assert_exit_status(truth("acceptreset"))
    s = truth("acceptreset").summary
    assert s["requests"]["total"] > 0 and s["errors"]["connection"] + s["errors"]["read"] == s["requests"]["total"], s["errors"]


def test_reset_at_accept_seen_as_a_reset_for_at_least_90_percent(truth):
    # The client sees the RST as a reset unless it races the client's own write or read: then Go
    # reports EOF or a broken pipe (2 of 101 in a cold CI run at load average 8). The class is
    # exact; the cause is what the client could see.
    s = truth("acceptreset").summary
    c = s["error_causes"]
    assert c["connection"]["reset"] + c["read"]["reset"] >= 0.9 * s["requests"]["total"], c


def test_one_failure_per_reset_connection(truth, servers):
    assert total(truth("acceptreset")) == servers.events("acceptreset", "reset")


@pytest.fixture(scope="module")
def reusecut(truth):
    return truth("reusecut", BENCH_RATE=100, BENCH_CONNECTIONS=5)


def test_every_request_cut_on_a_reused_connection_counted_as_a_read_error(reusecut, servers):
    assert_exit_status(reusecut)
    cut = servers.events("reusecut", "cut")
    assert cut > 0 and reusecut.summary["errors"]["read"] == cut, (cut, reusecut.summary["errors"])


def test_the_cut_requests_were_replays_the_transport_hid(reusecut, servers):
    assert reusecut.summary["error_causes"]["read"]["replayed"] == servers.events("reusecut", "cut")


def test_benchs_requests_are_the_servers_answers(reusecut, servers):
    assert total(reusecut) == servers.events("reusecut", "served")


def test_settings_say_how_replays_were_counted(reusecut):
    assert reusecut.summary["settings"]["replays"] == "counted_as_read_errors"


def test_keepalive_false_opens_one_connection_per_request_where_connection_close_is_ignored(truth, servers):
    run = truth("ignoreclose", BENCH_KEEPALIVE="false", BENCH_RATE=100)
    assert_exit_status(run)
    conns, served = servers.events("ignoreclose", "conn"), servers.events("ignoreclose", "served")
    assert served == total(run) and conns == total(run), f"{conns} connections, {served} requests, {total(run)} sent"


# ---- setup stops runs that cannot measure anything ----

@pytest.fixture(scope="module")
def setup_dead(k6, servers):
    return k6("setup-dead", "static.js", dict(BENCH_TARGET_URL=servers.url("closed"), BENCH_RATE=10, BENCH_DURATION="2s",
                                              BENCH_READY_TIMEOUT="3s"))


def test_setup_dead_target_stops_the_run_with_a_message_naming_the_url(setup_dead, servers):
    assert setup_dead.rc == 107, setup_dead.stderr[-3000:]  # k6's "script exception": setup threw
    assert (f"127.0.0.1:{servers.ports['closed']}/ (BENCH_TARGET_URL + BENCH_PATH) does not answer within 3 s "
            "(BENCH_READY_TIMEOUT)") in setup_dead.stderr


def test_setup_the_summary_still_written_says_zero_requests(setup_dead):
    assert setup_dead.summary["requests"]["total"] == 0


def test_setup_a_404_wrong_route_stops_the_run(k6, servers):
    run = k6("setup-404", "static.js", dict(BENCH_TARGET_URL=servers.http, BENCH_PATH="/missing", BENCH_RATE=10,
                                            BENCH_DURATION="2s", BENCH_READY_TIMEOUT="3s"))
    assert run.rc == 107, run.stderr[-3000:]  # k6's "script exception": setup threw
    assert any(r.agent == "bench-setup" and r.status == 404 for r in run.access)


# ---- bad configuration: the validation is unit-tested; these prove it stops k6 the way the
# k6-operator initializer runs it (`k6 inspect` with -e), including checks that live in entry scripts ----

BAD_CONFIG = {
    "rate": ("static.js", 'invalid BENCH_RATE=\\"-5\\": expected a whole number', ["-e", "BENCH_RATE=-5"]),
    "unknown": ("dynamic.js", "unknown variable BENCH_RAET: allowed are", ["-e", "BENCH_RAET=5"]),
    "tls": ("tls-handshakes.js", "tls-handshakes needs an https:// URL", ["-e", "BENCH_TARGET_URL=http://x"]),
    "paths": ("paths.js", "paths needs at least one of BENCH_URL_INGRESS", []),
    "maxrps": ("max-rps.js", 'invalid BENCH_DURATION=\\"5s\\": max-rps needs at least 10s', ["-e", "BENCH_DURATION=5s"]),
}


@pytest.fixture(scope="module")
def inspected():
    """Every `k6 inspect` of BAD_CONFIG at once (they are independent): name -> (exit, output)."""
    procs = {name: subprocess.Popen(["k6", "inspect", *args, str(SCENARIOS / script)], stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
             for name, (script, _, args) in BAD_CONFIG.items()}
    outputs = {name: p.communicate(timeout=120)[0] for name, p in procs.items()}
    return {name: (procs[name].returncode, outputs[name]) for name in procs}


@pytest.mark.parametrize("name", list(BAD_CONFIG))
def test_bad_config_stops_k6_with_a_message_naming_the_variable(inspected, name):
    rc, output = inspected[name]
    assert rc != 0, f"k6 inspect succeeded:\n{output}"
    assert BAD_CONFIG[name][1] in output, output


# ---- setup waits for a target that comes up late (a Gateway's data plane starting) ----

@pytest.fixture(scope="module")
def late_target(work):
    """static.js started against a port nothing listens on; a server starts there 12 s later, past
    10 s, longer than a short readiness check would wait (a data plane still starting when the TestRun
    does)."""
    port = free_port()
    run_dir = work / "late-target"
    proc = k6run.start(run_dir, "late-target", SCENARIOS / "static.js",
                       dict(BENCH_TARGET_URL=f"http://127.0.0.1:{port}", BENCH_RATE=20, BENCH_DURATION="1s",
                            BENCH_READY_TIMEOUT="60s"))
    started = time.monotonic()
    # the late start is the condition under test, not a wait for readiness
    time.sleep(12)
    server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
                              cwd=run_dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: port_open(port), 10, "the late target")
        up_after = time.monotonic() - started
        rc = proc.wait(120)
    finally:
        server.terminate()
        server.wait()
    return k6run.Run("late-target", run_dir, rc), up_after


def test_setup_waits_for_a_late_target_and_the_run_sends_load(late_target):
    run, up_after = late_target
    assert run.rc == 0, run.stderr[-3000:]
    assert up_after > 11 and run.summary["requests"]["total"] >= 15, (up_after, run.summary["requests"])

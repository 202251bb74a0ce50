"""backend-failover's flapping backend pod, piece by piece: its nginx.conf (the chart's, flap.conf in
place of the mode's placeholder lines) with Debian's nginx, the toggler flap.sh with short durations,
and the runner (scenarios/backend-failover.js) against a bare kube-apiserver, watching a local
flapping nginx as it would the pod (its IP 127.0.0.1), with the gate both passing and failing."""
import http.client
import os
import subprocess
import time
from pathlib import Path

import pytest

from harness.servers import start_backend_nginx

ROOT = Path(__file__).resolve().parents[3]
FLAP_SH = ROOT / "charts" / "bench" / "files" / "backend" / "flap.sh"
PATHS = ["/", "/bytes/1k", "/no-such-path", "/healthz"]


def get(port, path):
    """(status, X-Bench-Pod) of one GET on a new connection."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        return r.status, r.getheader("X-Bench-Pod")
    finally:
        c.close()


@pytest.fixture(scope="module")
def flapping(work):
    """A flapping nginx per mode, and the plain backend's."""
    started = []
    out = {mode: start_backend_nginx(started, work / f"flap-{mode}", mode) for mode in ("errors", "readiness")}
    out["plain"] = start_backend_nginx(started, work / "flap-plain")
    yield out
    for s in started:
        s.stop()


def statuses(server):
    return {path: get(server.port, path)[0] for path in PATHS}


@pytest.mark.parametrize("mode, unhealthy", [
    ("errors", {"/": 503, "/bytes/1k": 503, "/no-such-path": 503, "/healthz": 200}),
    ("readiness", {"/": 200, "/bytes/1k": 200, "/no-such-path": 404, "/healthz": 503}),
])
def test_nginx_answers_503_on_the_modes_paths_only_while_the_flag_file_exists(flapping, mode, unhealthy):
    s = flapping[mode]
    healthy = {"/": 200, "/bytes/1k": 200, "/no-such-path": 404, "/healthz": 200}
    assert statuses(s) == healthy
    s.flag.write_text("")
    try:
        assert statuses(s) == unhealthy
        # the 503 still names the pod: the load's errors are the flapping pod's
        assert get(s.port, "/healthz" if mode == "readiness" else "/")[1]
    finally:
        s.flag.unlink()
    assert statuses(s) == healthy


def test_the_other_backend_pods_never_look_at_a_flag_file(flapping):
    s = flapping["plain"]
    assert "-f " not in (s.flag.parent / "nginx.conf").read_text()
    s.flag.write_text("")
    assert statuses(s) == {"/": 200, "/bytes/1k": 200, "/no-such-path": 404, "/healthz": 200}


def flap_env(**values):
    env = {"PATH": os.environ["PATH"]}
    env.update(values)
    return env


def test_flap_sh_keeps_its_schedule_healthy_first(tmp_path):
    """1 s healthy, 1 s unhealthy, sampled every 50 ms for 3.5 s: flag absent, present, absent,
    present, each for about a second; a stop leaves the pod healthy (no flag)."""
    flag = tmp_path / "unhealthy"
    flag.write_text("")  # left by an earlier toggler: a new one starts healthy
    proc = subprocess.Popen(["sh", FLAP_SH], env=flap_env(BENCH_FLAP_UNHEALTHY_SECONDS="1",
                                                          BENCH_FLAP_HEALTHY_SECONDS="1", BENCH_FLAP_FILE=str(flag)),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    start = time.monotonic()
    while flag.exists() and time.monotonic() - start < 2:  # its first act: the stale flag removed
        time.sleep(0.01)
    samples = []
    while time.monotonic() - start < 3.5:  # stopped inside the second unhealthy window
        samples.append((time.monotonic() - start, flag.exists()))
        time.sleep(0.05)
    proc.terminate()
    out = proc.communicate(timeout=10)[0]
    assert proc.returncode == 0, out
    assert not flag.exists(), "a stopped toggler left the pod unhealthy"
    runs = []  # (state, first seen, last seen)
    for t, state in samples:
        if runs and runs[-1][0] == state:
            runs[-1][2] = t
        else:
            runs.append([state, t, t])
    assert [r[0] for r in runs][:4] == [False, True, False, True], (runs, out)
    for state, first, last in runs[1:3]:  # the whole windows: about 1 s each
        assert 0.7 <= last - first <= 1.3, (runs, out)
    assert "flap 1: unhealthy for 1s" in out and "flap 1: healthy for 1s" in out, out


@pytest.mark.parametrize("name, value", [
    ("BENCH_FLAP_UNHEALTHY_SECONDS", "0"),
    ("BENCH_FLAP_UNHEALTHY_SECONDS", "1.5"),
    ("BENCH_FLAP_HEALTHY_SECONDS", "3601"),
    ("BENCH_FLAP_HEALTHY_SECONDS", ""),
    ("BENCH_FLAP_HEALTHY_SECONDS", "1; touch HOSTILE"),
    ("BENCH_FLAP_UNHEALTHY_SECONDS", "$(touch HOSTILE)"),
    ("BENCH_FLAP_FILE", "relative/flag"),
])
def test_flap_sh_refuses_a_bad_setting_naming_it_and_runs_nothing_from_it(tmp_path, name, value):
    env = {"BENCH_FLAP_UNHEALTHY_SECONDS": "1", "BENCH_FLAP_HEALTHY_SECONDS": "1", "BENCH_FLAP_FILE": str(tmp_path / "f")}
    env[name] = value.replace("HOSTILE", str(tmp_path / "hostile"))
    r = subprocess.run(["sh", FLAP_SH], env=flap_env(**env), capture_output=True, text=True, timeout=10, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert name in r.stderr and "expected" in r.stderr, r.stderr
    assert not (tmp_path / "hostile").exists()

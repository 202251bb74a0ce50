"""Real servers and k6 runs for the test parts, all on 127.0.0.1: processes of ours with their logs,
waited on for readiness and stopped at teardown (the dashboards and report parts share them)."""
import json
import os
import re
import subprocess
import urllib.request
from pathlib import Path

import pytest

from .k6 import k6_environ  # noqa: F401  (re-exported to the conftests)
from .procs import free_port, port_open, wait_until  # noqa: F401  (re-exported to the conftests)

ROOT = Path(__file__).resolve().parents[3]
TOOLS = Path(os.environ.get("BENCH_TOOLS", ROOT / ".tools"))

# What ci/lib/common.sh sets for every script: the tools on PATH, k6 never phoning home.
os.environ["PATH"] = f"{TOOLS / 'bin'}{os.pathsep}{os.environ['PATH']}"
os.environ.update(K6_NO_USAGE_REPORT="true", K6_AUTO_EXTENSION_RESOLUTION="false")


def run(cmd, **kwargs):
    """Runs cmd, output captured as text; never raises on a non-zero exit (the test asserts it)."""
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)


def output_of(result):
    return (result.stdout + result.stderr).strip()


def http_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return 200 <= r.status < 300
    except OSError:
        return False


class Server:
    """A process of ours with its log file; stopped (SIGTERM, then SIGKILL) at teardown."""

    def __init__(self, name, cmd, log, **kwargs):
        self.name, self.log = name, Path(log)
        self.proc = subprocess.Popen([str(c) for c in cmd], stdout=self.log.open("w"),
                                     stderr=subprocess.STDOUT, **kwargs)

    def ready(self, probe, timeout, what):
        try:
            wait_until(lambda: self.proc.poll() is None and probe(), timeout, what)
        except TimeoutError as e:
            raise RuntimeError(f"{e} (exit {self.proc.poll()}); {self.name} log:\n{self.log_text()}") from None

    def log_text(self):
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_prometheus(servers, directory, scrape_configs=None):
    """Prometheus 2.42 as our own process (never the packaged service): its own config and data."""
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = {"global": {"scrape_interval": "15s"}}
    if scrape_configs:
        config["scrape_configs"] = scrape_configs
    (directory / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
    s = Server("prometheus", ["prometheus", f"--config.file={directory / 'prometheus.yml'}",
                              f"--storage.tsdb.path={directory / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                              "--web.enable-remote-write-receiver", "--enable-feature=native-histograms",
                              "--log.level=warn"], directory / "prometheus.log")
    servers.append(s)
    s.url, s.port = f"http://127.0.0.1:{port}", port
    s.ready(lambda: http_ok(f"{s.url}/-/ready"), 30, "Prometheus")
    return s


def flapping_conf(conf, mode, flag):
    """backend-failover's flapping pod's nginx.conf, as charts/bench/templates/backend/configmap.yaml
    makes it: MODE's line of flap.conf ("mode placeholder directive"), its directive with FLAG for
    the flag file in place of that placeholder's whole lines."""
    rows = [line.split(" ", 2) for line in (ROOT / "charts/bench/files/backend/flap.conf").read_text().splitlines()]
    (place, directive), = [row[1:] for row in rows if row[0] == mode]
    directive = directive.replace("BENCH_FLAP_FILE", str(flag))
    return re.sub(rf"(?m)^( *){re.escape(place)}$", lambda m: m[1] + directive, conf)


def start_backend_nginx(servers, directory, flap_mode=None):
    """The chart's backend nginx.conf on 127.0.0.1:PORT; with FLAP_MODE (errors, readiness, close) the
    flapping pod's, its flag file s.flag = DIRECTORY/unhealthy."""
    files = ROOT / "charts/bench/files/backend"
    bodies = directory / "bodies"
    bodies.mkdir(parents=True, exist_ok=True)
    r = run(["sh", files / "make-bodies.sh", bodies])
    assert r.returncode == 0, output_of(r)
    port = free_port()
    conf = ((files / "nginx.conf").read_text().replace("BENCH_PORT", f"127.0.0.1:{port}")
            .replace("BENCH_BODIES_DIR", str(bodies)).replace("/tmp/nginx.pid", str(directory / "nginx.pid")))
    if flap_mode:
        conf = flapping_conf(conf, flap_mode, directory / "unhealthy")
    (directory / "nginx.conf").write_text(conf)
    s = Server("nginx", ["nginx", "-c", directory / "nginx.conf", "-g", "daemon off;"], directory / "nginx.log")
    servers.append(s)
    s.url, s.port, s.flag = f"http://127.0.0.1:{port}", port, directory / "unhealthy"
    s.ready(lambda: http_ok(f"{s.url}/healthz"), 15, "nginx")
    return s


STALL_SERVER = """import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1024)
time.sleep(86400)
"""


# The two session fixtures both parts use; they take the part's own runtime_tools, servers and work.
@pytest.fixture(scope="session")
def prometheus(runtime_tools, servers, work):
    return start_prometheus(servers, work / "prometheus")


@pytest.fixture(scope="session")
def nginx(runtime_tools, servers, work):
    return start_backend_nginx(servers, work / "nginx")


def k6_remote_write(prom, testid, script, args, env, log):
    """A real k6 run pushing into Prometheus with native histograms, tagged like the chart does."""
    env = {**k6_environ(), **{k: str(v) for k, v in env.items()},
           "K6_PROMETHEUS_RW_SERVER_URL": f"{prom.url}/api/v1/write",
           "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM": "true", "K6_PROMETHEUS_RW_PUSH_INTERVAL": "1s"}
    with open(log, "w") as out:
        return subprocess.run(["k6", "run", "--quiet", "--no-color", "-o", "experimental-prometheus-rw",
                               "--tag", f"testid={testid}", "--tag", "controller=none", *map(str, args), str(script)],
                              stdout=out, stderr=subprocess.STDOUT, env=env).returncode



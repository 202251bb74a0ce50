"""Fixtures of the scenarios tests: the project's k6 (k6 v1.8.1 + xk6-kubernetes + k6/x/bench,
scenarios/runner/build.sh), real servers on 127.0.0.1 and, for the churn scenarios, a bare
kube-apiserver + etcd (harness/apiserver.py) with a least-privilege runner identity.

Servers (session): Debian nginx with the chart's backend nginx.conf (plus a second port, the "pod"
path, a TLS server and a 502/429 server) logging every request to an access log the tests count,
and the misbehaving servers of scenarios/tests/error_server.py, whose stdout is their ground truth.
Runs are sequential: each clears the access log first and keeps the lines it produced.
"""
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness import k6 as k6run  # ci/test/harness (pytest.ini's pythonpath)
from harness.procs import Procs, free_port, readable_work_dir, wait_port

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = ROOT / "scenarios"
TOOLS = Path(os.environ.get("BENCH_TOOLS", ROOT / ".tools"))
ERROR_MODES = ("refuse", "stall", "reset", "tls", "tlscut-fin", "tlscut-rst", "acceptreset", "reusecut", "ignoreclose")

# What ci/lib/common.sh sets for every script: the tools on PATH, k6 never phoning home.
os.environ["PATH"] = f"{TOOLS / 'bin'}{os.pathsep}{os.environ['PATH']}"
os.environ.update(k6run.K6_ENV)


def run(cmd, **kwargs):
    """Runs cmd, output captured as text; never raises on a non-zero exit (the test asserts it)."""
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)


def pytest_sessionstart(session):
    # k6 (a stamp check when warm); ci/test/all.sh installed the Debian packages of packages.txt.
    steps = (["bash", ROOT / "scenarios" / "runner" / "build.sh"],)
    for step in steps:
        result = run(step)
        if result.returncode != 0:
            pytest.exit(f"{step[-1]} failed:\n{result.stdout}{result.stderr}", returncode=1)


# ---- the k6 unit tests (scenarios/tests/unit.js): one case per UNIT line -----------------------

_unit = {}


def unit_results():
    """unit.js run once (at collection: its cases become test cases): exit status, {name: failure
    reason or None}."""
    if not _unit:
        result = run(["k6", "run", "-q", "--log-format", "raw", SCENARIOS / "tests" / "unit.js"])
        cases = {}
        for line in (result.stdout + result.stderr).splitlines():
            m = re.match(r"^UNIT (PASS|FAIL) (.*)$", line)
            if m and m[1] == "PASS":
                cases[m[2]] = None
            elif m:
                name, _, why = m[2].partition(": ")
                cases[name] = why or "failed"
        _unit.update(rc=result.returncode, cases=cases, output=result.stdout + result.stderr)
    return _unit


def pytest_generate_tests(metafunc):
    if "unit_case" in metafunc.fixturenames:
        names = list(unit_results()["cases"])
        metafunc.parametrize("unit_case", names, ids=names)


@pytest.fixture(scope="session")
def unit():
    """unit.js's run: rc (k6's exit status), cases ({name: failure reason or None}), output."""
    return unit_results()


# ---- servers ------------------------------------------------------------------------------------

# $server_port $status $connection $connection_requests "$ssl_session_reused" $uri $body_bytes_sent "$http_user_agent"
ACCESS_LINE = re.compile(r'^(\d+) (\d+) (\d+) (\d+) "([^"]*)" (\S+) (\d+) "(.*)"$')


@dataclass
class Request:
    """One line of the nginx access log."""
    port: int
    status: int
    connection: int
    connection_requests: int
    ssl_reused: str  # "r" or "."
    uri: str
    bytes: int
    agent: str

    @property
    def from_k6(self):
        return self.agent.startswith("k6/")


def parse_access(text):
    requests = []
    for line in text.splitlines():
        m = ACCESS_LINE.match(line)
        assert m, f"unexpected access log line: {line!r}"
        requests.append(Request(int(m[1]), int(m[2]), int(m[3]), int(m[4]), m[5], m[6], int(m[7]), m[8]))
    return requests


@dataclass
class Servers:
    work: Path
    procs: Procs
    ports: dict = field(default_factory=dict)

    @property
    def http(self):
        return f"http://127.0.0.1:{self.ports['http']}"

    def url(self, name, scheme="http"):
        return f"{scheme}://127.0.0.1:{self.ports[name]}"

    @property
    def access_log(self):
        return self.work / "access.log"

    def clear_access(self):
        # nginx appends (O_APPEND): truncating under it is safe.
        self.access_log.write_bytes(b"")

    def access(self):
        return parse_access(self.access_log.read_text())

    def events_log(self, mode):
        return self.work / f"events-{mode}.log"

    def clear_events(self, mode):
        self.events_log(mode).write_bytes(b"")

    def events(self, mode, name):
        """How many NAME events the MODE error server logged since its log was cleared."""
        return self.events_log(mode).read_text().splitlines().count(name)


def write_nginx_conf(work, ports):
    """The chart's backend nginx.conf with its placeholders filled in, an access log the checks
    count, a second port (the "pod" path), a TLS server and a 502/429 server."""
    conf = (ROOT / "charts" / "bench" / "files" / "backend" / "nginx.conf").read_text()
    log_format = ("log_format bench '$server_port $status $connection $connection_requests \"$ssl_session_reused\" "
                  f"$uri $body_bytes_sent \"$http_user_agent\"'; access_log {work}/access.log bench;")
    for old, new in (("/tmp/", f"{work}/"),
                     ("listen BENCH_PORT reuseport;",
                      f"listen 127.0.0.1:{ports['http']} reuseport; listen 127.0.0.1:{ports['http2']};"),
                     ("BENCH_BODIES_DIR", f"{work}/bodies"), ("access_log off;", log_format)):
        assert old in conf, f"{old!r} no longer in the backend nginx.conf"
        conf = conf.replace(old, new)
    assert not [l for l in conf.splitlines() if "BENCH_" in l.split("#")[0]], "placeholders left in nginx.conf"
    # The extra servers inside the http block: before its closing brace, the last one.
    head, brace, _ = conf.rstrip().rpartition("}")
    assert brace, "no closing brace in nginx.conf"
    extra = f"""
  server {{
    listen 127.0.0.1:{ports["https"]} ssl;
    ssl_certificate {work}/tls.crt;
    ssl_certificate_key {work}/tls.key;
    add_header X-Bench-Pod $hostname always;
    location /bytes/ {{ alias {work}/bodies/; }}
    location / {{ return 200 "ok\\n"; }}
  }}
  # A controller that picks the certificate by TLS server name (NGINX Ingress Controller without a
  # default certificate, NGINX Gateway Fabric, Envoy Gateway and Istio listeners with a hostname):
  # any other name is refused at the handshake, and a Host other than the name is a 421.
  server {{
    listen 127.0.0.1:{ports["sni"]} ssl default_server;
    ssl_reject_handshake on;
  }}
  server {{
    listen 127.0.0.1:{ports["sni"]} ssl;
    server_name bench.local;
    ssl_certificate {work}/tls.crt;
    ssl_certificate_key {work}/tls.key;
    if ($ssl_server_name != $host) {{ return 421; }}
    add_header X-Bench-Pod $hostname always;
    add_header X-Bench-SNI $ssl_server_name always;
    location /bytes/ {{ alias {work}/bodies/; }}
    location / {{ return 200 "ok\n"; }}
  }}
  server {{
    listen 127.0.0.1:{ports['502']};
    location = /too-many {{
      if ($http_user_agent = bench-setup) {{ return 200 "ok\\n"; }}
      return 429 "slow down\\n";
    }}
    location / {{
      if ($http_user_agent = bench-setup) {{ return 200 "ok\\n"; }}
      proxy_pass http://127.0.0.1:{ports['closed']};
    }}
  }}
}}
"""
    (work / "nginx.conf").write_text(head + extra)


@pytest.fixture(scope="session")
def work():
    with readable_work_dir("bench-scenarios.") as path:
        yield path


@pytest.fixture(scope="session")
def servers(work):
    names = ("http", "http2", "https", "sni", "502", "closed") + ERROR_MODES
    ports = {name: free_port() for name in names}
    procs = Procs(work / "logs")
    s = Servers(work, procs, ports)
    result = run(["sh", ROOT / "charts" / "bench" / "files" / "backend" / "make-bodies.sh", work / "bodies"])
    assert result.returncode == 0, result.stderr
    result = run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=bench.local",
                  "-keyout", work / "tls.key", "-out", work / "tls.crt"])
    assert result.returncode == 0, result.stderr
    write_nginx_conf(work, ports)
    nginx = ["nginx", "-c", work / "nginx.conf", "-p", work, "-e", work / "nginx-error.log"]
    result = run([*nginx, "-t", "-q"])
    assert result.returncode == 0, f"nginx rejects {work / 'nginx.conf'}:\n{result.stderr}"
    procs.start("nginx", [*nginx, "-g", "daemon off;"])
    for mode in ERROR_MODES:
        # stdout: the server's ground truth, one line per event; appended, so clear_events can
        # truncate it under the server.
        procs.start(f"error-{mode}", [sys.executable, SCENARIOS / "tests" / "error_server.py", mode, ports[mode],
                                      work / "tls.crt", work / "tls.key"], stdout=s.events_log(mode), append=True)
    try:
        for name in names:
            if name != "closed":
                wait_port(ports[name])
    except TimeoutError:
        procs.stop_all()
        raise AssertionError(f"a server did not start:\n{procs.logs()}")
    yield s
    procs.stop_all()


@pytest.fixture(scope="session")
def k6(servers, work):
    """k6(name, script, env, args): one run of scenarios/SCRIPT, sequential, its output in
    work/NAME/; the Run gets `access`, the nginx access-log lines of this run."""
    def run_k6(name, script, env=None, args=(), **popen):
        servers.clear_access()
        result = k6run.run(work / name, name, SCENARIOS / script, env, args, **popen)
        result.access = servers.access()
        return result
    return run_k6


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    if rep.failed and "servers" in getattr(item, "funcargs", {}):
        rep.sections.append(("servers' logs", item.funcargs["servers"].procs.logs()))
    return rep


# ---- runs several modules read -----------------------------------------------------------------

@pytest.fixture(scope="session")
def static_run(k6, servers):
    return k6("static", "static.js", dict(BENCH_TARGET_URL=servers.http, BENCH_RATE=200, BENCH_DURATION="3s",
                                           BENCH_CONNECTIONS=20), ["--tag", "controller=none"])


"""long-lived (scenarios/long-lived.js) with the real k6 against two real bench-stream processes
(backends/stream) behind a local nginx (TLS, HTTP/1.1 and HTTP/2 by ALPN: ticks and WebSocket proxied,
gRPC through grpc_pass), the churn on a bare kube-apiserver + etcd (no kubelet: the Deployments get no
pods, so the churn's changes are seen in the API only). What breaks streams here is done by the test
itself, as a controller would: nginx restarted (its connections cut, the port closed a moment), nginx
reloaded (its old worker closes what it still carries after worker_shutdown_timeout), and one
bench-stream stopped with SIGTERM (the backend disruption's scale-down in small). Each run once
(module fixtures), in file order."""
import json
import re
import signal
import subprocess
import threading
import time

import pytest

from conftest import ROOT, SCENARIOS, run
from contract import schema_errors
from harness import k6 as k6run
from harness.apiserver import BIN, BareApiServer
from harness.procs import Procs, free_port, wait_port
from harness.role import runner_role_rules

NS = "bench-ll"
INTERVAL_MS = 50
STREAMS = 2  # per kind
KINDS = ("http", "websocket", "grpc")
# The long-lived rules of the runner's Role beside the contract's common ones (the stream
# Deployment by name, the reload route's Ingresses): the chart's side states them in
# scenarios/contract.json runnerRole once both sides are merged.
LONG_LIVED_RULES = [
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "update"], "resourceNames": ["bench-stream"]},
    {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses"], "verbs": ["create", "get", "delete", "list"]},
]


def deployment(name, replicas):
    labels = {"app.kubernetes.io/component": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": f"bench/{name}:local"}]}}}}


@pytest.fixture(scope="module")
def kube(work):
    api = BareApiServer(work / "kube-ll", {"admin": ["system:masters"], "bench-runner": []})
    api.start()
    rules = runner_role_rules() + LONG_LIVED_RULES
    items = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "bench-runner", "namespace": NS},
         "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "bench-runner", "namespace": NS},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "bench-runner"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bench-runner"}]},
        deployment("bench-backend", 2), deployment("bench-stream", 3)]
    api.kubectl("admin", "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    yield api
    api.stop()


def write_proxy_conf(d, port, backends, shutdown_s):
    backends = "".join(f"server 127.0.0.1:{p};" for p in backends)
    (d / "nginx.conf").write_text(f"""
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log;
# a reload's old worker closes what it still carries after this long (a controller's reload)
worker_shutdown_timeout {shutdown_s}s;
events {{}}
http {{
  access_log off;
  map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
  upstream stream {{ {backends} }}
  upstream stream_grpc {{ {backends} }}
  server {{
    listen 127.0.0.1:{port} ssl http2;
    ssl_certificate {d}/tls.crt;
    ssl_certificate_key {d}/tls.key;
    location / {{ add_header X-Bench-Pod proxy always; return 200 "ok\\n"; }}
    location /stream/ {{
      proxy_pass http://stream;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_buffering off;
      proxy_read_timeout 1h;
    }}
    location /bench.stream.v1.Ticks/ {{ grpc_pass grpc://stream_grpc; grpc_read_timeout 1h; }}
  }}
}}
""")


class Path_:
    """The two bench-stream processes and the nginx in front: start, restart, reload, SIGTERM."""

    def __init__(self, work):
        self.dir = work / "long-lived-path"
        self.dir.mkdir()
        self.procs = Procs(self.dir / "logs")
        try:
            self.start()
        except BaseException:
            self.procs.stop_all()  # a failed start leaves no process behind
            raise

    def start(self):
        result = run(["bash", ROOT / "backends" / "stream" / "build.sh"])
        assert result.returncode == 0, result.stderr
        self.binary = result.stdout.strip()
        result = run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=bench.local",
                      "-keyout", self.dir / "tls.key", "-out", self.dir / "tls.crt"])
        assert result.returncode == 0, result.stderr
        self.ports = [free_port(), free_port()]
        self.streams = [self.start_stream(i) for i in range(2)]
        self.port = free_port()
        write_proxy_conf(self.dir, self.port, self.ports, 1)
        self.nginx_cmd = ["nginx", "-c", self.dir / "nginx.conf", "-p", self.dir, "-e", self.dir / "error.log"]
        result = run([*self.nginx_cmd, "-t", "-q"])
        assert result.returncode == 0, result.stderr
        self.nginx = self.start_nginx()

    def start_stream(self, i):
        proc = self.procs.start(f"stream-{i}", [self.binary, "--listen", f"127.0.0.1:{self.ports[i]}"])
        wait_port(self.ports[i])
        return proc

    def start_nginx(self):
        proc = self.procs.start("nginx", [*self.nginx_cmd, "-g", "daemon off;"])
        wait_port(self.port)
        return proc

    @property
    def url(self):
        return f"https://127.0.0.1:{self.port}"

    def restart_nginx(self, down_s):
        """SIGTERM is nginx's fast shutdown: every connection cut at once; the port closed down_s."""
        self.procs.stop(self.nginx)
        time.sleep(down_s)
        self.nginx = self.start_nginx()

    def reload_nginx(self):
        self.nginx.send_signal(signal.SIGHUP)

    def stop_stream(self, i):
        """SIGTERM: the backend's own clean end of its streams; exit status 0 expected."""
        return self.procs.stop(self.streams[i])

    def stream_log(self, i):
        return (self.dir / "logs" / f"stream-{i}.err").read_text()


@pytest.fixture(scope="module")
def path(work):
    p = Path_(work)
    yield p
    p.procs.stop_all()


def env(kube, path, **extra):
    e = dict(BENCH_TARGET_URL=path.url, BENCH_NAMESPACE=NS, BENCH_DEPLOYMENT="bench-backend",
             BENCH_POD_SELECTOR="app.kubernetes.io/component=bench-backend", BENCH_RATE=20, BENCH_CONNECTIONS=10,
             BENCH_TIMEOUT="1s", BENCH_DURATION="12s", BENCH_KUBECONFIG=kube.kubeconfig("bench-runner"),
             BENCH_LONGLIVED_STREAMS=STREAMS, BENCH_LONGLIVED_INTERVAL=f"{INTERVAL_MS}ms",
             BENCH_LONGLIVED_DISRUPTIONS="none", BENCH_LONGLIVED_HOLD="2s", BENCH_ROUTE_KIND="ingress",
             BENCH_TARGET_HOST="bench.local")
    e.update(extra)
    return e


def k6_run(work, name, environment, during=None, at_s=5.0):
    """One run of long-lived.js; DURING() is called AT_S seconds after k6 started (the test's own
    disruption of the path)."""
    proc = k6run.start(work / name, name, SCENARIOS / "long-lived.js", environment)
    if during:
        timer = threading.Timer(at_s, during)
        timer.start()
    try:
        rc = proc.wait(180)
    finally:
        if during:
            timer.cancel()
    return k6run.Run(name, work / name, rc)


def section(r):
    return r.summary["long_lived"]


def per_kind(r, key, sub=None):
    by = section(r)["by_kind"]
    return {k: (by[k][key][sub] if sub else by[k][key]) for k in KINDS}


# ---- quiet: nothing disrupts the path ----------------------------------------------------------

@pytest.fixture(scope="module")
def quiet(kube, path, work):
    return k6_run(work, "ll-quiet", env(kube, path))


def test_quiet_exit_0_and_no_break(quiet):
    assert quiet.rc == 0, quiet.stderr[-3000:]
    ll = section(quiet)
    assert per_kind(quiet, "opened") == {k: STREAMS for k in KINDS}, ll
    assert (ll["broken"], ll["open_errors"], ll["messages_lost"], ll["gate"]["passed"]) == (0, 0, 0, True), ll


def test_quiet_every_stream_got_a_message_per_interval(quiet):
    # 12 s at 50 ms: 240 slots per stream (the first waits for a slot boundary; a stream opened late on
    # a busy machine has fewer, none is skipped)
    for kind, n in per_kind(quiet, "messages").items():
        assert STREAMS * 200 <= n <= STREAMS * 241, (kind, n)


def test_quiet_summary_valid_against_the_contract(quiet):
    assert schema_errors(quiet.summary) == []


def test_quiet_table_shows_the_streams(quiet):
    table = quiet.table
    assert "Long-lived streams: 2 per kind, one message per 50 ms, disruptions none" in table, table
    assert "gate: passed" in table


# ---- churn: the reload route and the stream Deployment, on the API ---------------------------------

def watch(kube, work, name, what, output):
    out = work / f"watch-{name}"
    proc = subprocess.Popen([BIN / "kubectl", "--kubeconfig", kube.kubeconfig("admin"), "-n", NS, "get", what, "-w",
                             "-o", output], stdout=open(out, "wb"), stderr=subprocess.DEVNULL)
    return proc, out


@pytest.fixture(scope="module")
def churn(kube, path, work):
    w1, replicas = watch(kube, work, "ll-stream", "deployment/bench-stream", 'jsonpath={.spec.replicas}{"\\n"}')
    w2, routes = watch(kube, work, "ll-routes", "ingresses", "jsonpath={.metadata.name} {.spec.rules[0].host} "
                       '{.metadata.deletionTimestamp}{"\\n"}')
    time.sleep(1)
    r = k6_run(work, "ll-churn", env(kube, path, BENCH_LONGLIVED_DISRUPTIONS="reload,backend"))
    time.sleep(1)
    for w in (w1, w2):
        w.terminate()
        w.wait()
    r.replicas = [l for l in replicas.read_text().splitlines() if l.strip()]
    r.routes = routes.read_text()
    return r


def test_churn_exit_0_four_events(churn):
    assert churn.rc == 0, churn.stderr[-3000:]
    assert churn.summary["scale_events"] == 4, churn.stderr[-3000:]
    log = [l.split(" at +")[0] for l in churn.stderr.splitlines() if l.startswith("churn: ")]
    assert [l for l in log if "reload_route" in l or "stream_scale" in l] == [
        "churn: reload_route_created extra route on the test's host",
        "churn: reload_route_deleted extra route on the test's host",
        "churn: stream_scale stream backend bench-ll/bench-stream replicas=5",
        "churn: stream_scale stream backend bench-ll/bench-stream replicas=3"], log


def test_churn_the_api_saw_the_route_on_the_test_host_come_and_go(churn, kube):
    assert "bench-route-i-reload bench.local" in churn.routes, churn.routes
    left = kube.kubectl("admin", "-n", NS, "get", "ingresses", "-o", "name").stdout
    assert left.strip() == "", left


def test_churn_the_api_saw_the_stream_deployment_3_5_3(churn):
    seq = [v for i, v in enumerate(churn.replicas) if i == 0 or churn.replicas[i - 1] != v]
    assert seq == ["3", "5", "3"], churn.replicas


# ---- the path broken under the streams -------------------------------------------------------------

@pytest.fixture(scope="module")
def restart(kube, path, work):
    return k6_run(work, "ll-restart", env(kube, path), during=lambda: path.restart_nginx(1.0))


def test_restart_breaks_every_kind_and_fails_the_gate(restart):
    assert restart.rc == 99, restart.stderr[-3000:]
    ll = section(restart)
    assert per_kind(restart, "broken", "reset") == {k: STREAMS for k in KINDS}, ll
    assert ll["broken_by_backend"] == 0 and ll["gate"]["passed"] is False, ll


def test_restart_loses_the_slots_of_the_downtime(restart):
    # about 1 s down at 50 ms a slot: some 20 slots a stream, counted through the reconnect
    for kind, n in per_kind(restart, "messages_lost").items():
        assert n >= STREAMS * 10, (kind, n, section(restart))


def test_restart_every_stream_came_back(restart):
    assert per_kind(restart, "opened") == {k: 2 * STREAMS for k in KINDS}, section(restart)


def test_restart_the_table_says_failed(restart):
    assert "!! WARNING: long-lived FAILED: 6 stream(s) broken by the path" in restart.table, restart.table


@pytest.fixture(scope="module")
def reload(kube, path, work):
    return k6_run(work, "ll-reload", env(kube, path), during=path.reload_nginx)


def test_reload_old_worker_breaks_the_streams_after_its_shutdown_timeout(reload):
    assert reload.rc == 99, reload.stderr[-3000:]
    ll = section(reload)
    assert per_kind(reload, "broken", "reset") == {k: STREAMS for k in KINDS}, ll
    # each broke once, when the old worker gave up (1 s after the reload, some 5 s into the run)
    for kind, after in per_kind(reload, "broken_after_ms").items():
        assert after["count"] == STREAMS and after["max"] >= 1000, (kind, after)


# ---- the backend's own clean end ------------------------------------------------------------------

@pytest.fixture(scope="module")
def backend_stop(kube, path, work):
    stopped = {}
    r = k6_run(work, "ll-backend-stop", env(kube, path), during=lambda: stopped.update(rc=path.stop_stream(0)))
    r.stream_rc = stopped.get("rc")
    r.stream_log = path.stream_log(0)
    return r


def test_backend_stop_ends_its_streams_cleanly_and_passes_the_gate(backend_stop):
    assert backend_stop.stream_rc == 0, backend_stop.stream_log
    assert backend_stop.rc == 0, backend_stop.stderr[-3000:]
    ll = section(backend_stop)
    # nginx spread the streams over both processes: those on the stopped one ended, by the backend
    assert ll["broken_by_path"] == 0 and ll["broken_by_backend"] >= 1, ll
    assert len(re.findall(r'reason="server stopping"', backend_stop.stream_log)) == ll["broken_by_backend"], (
        ll, backend_stop.stream_log)

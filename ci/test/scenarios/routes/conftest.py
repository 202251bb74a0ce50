"""Fixtures of the route experiments' tests (scenarios/route-*.js) against a real Gateway API
controller with no cluster: a bare kube-apiserver + etcd (ci/test/harness/apiserver.py) with the
Gateway API CRDs the chart pins (from the sigs.k8s.io/gateway-api Go module), Traefik v3.6.12 on the
host with its kubernetesgateway and kubernetesingress providers watching that API server, and the
chart's backend nginx.conf as the backend.

EndpointSlices may not point at 127.0.0.0/8, so the backend runs in a network namespace created here
(a veth pair on 198.18.0.0/15, the benchmarking range) and the Services' EndpointSlices, written by
hand (no controllers here), point at it. The scenarios run as a user holding exactly the Role of
scenarios/contract.json (runnerRole).

ROUTES_KEEP_SUMMARIES=DIR keeps each k6 run's summary.json as DIR/<run>.json (runs: propagation,
change, change-broken, scale, forbidden), e.g. to refresh ci/test/report/testdata:
    ROUTES_KEEP_SUMMARIES=/tmp/s .tools/bench-venv/bin/python -m pytest ci/test/scenarios/routes
"""
import json
import os
import random
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from harness import k6  # ci/test/harness (pytest.ini's pythonpath)
from harness.apiserver import BareApiServer, ensure_kube_binaries
from harness.procs import Procs, free_port, readable_work_dir
from harness.role import runner_role_rules

ROOT = Path(__file__).resolve().parents[4]
SCENARIOS = ROOT / "scenarios"
NS = "bench-test"
CACHE = Path(os.environ.get("BENCH_CACHE", Path.home() / ".cache" / "bench"))
TOOLS = Path(os.environ.get("BENCH_TOOLS", ROOT / ".tools"))
# What ci/lib/common.sh sets for every script (these tests may run alone, without the scenarios
# part's conftest): the runner's k6 on PATH (harness/k6.py runs `k6`), k6 never phoning home.
os.environ["PATH"] = f"{TOOLS / 'bin'}{os.pathsep}{os.environ['PATH']}"
os.environ.update(k6.K6_ENV)

# Test traffic stays on this machine: no proxy from the environment for the readiness probes.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def run(cmd, **kwargs):
    """cmd (an argument list), output captured as text; never raises on a non-zero exit."""
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)


def must(cmd, what, **kwargs):
    result = run(cmd, **kwargs)
    if result.returncode != 0:
        pytest.fail(f"{what} failed (exit {result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return result


def wait_until(seconds, predicate, interval=0.1):
    """predicate() every `interval` s until it is true; False after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except OSError:
            pass
        time.sleep(interval)
    return False


def http_ok(url, host=None):
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    with HTTP.open(request, timeout=2) as response:
        return response.status == 200


# ---- what the tests need (built once, cached across runs) ----

def bash_fn(script, *args):
    """`bash script args` from the repository root (stdout captured; the scripts log to stderr)."""
    return must(["bash", ROOT / script, *args], f"bash {script} {' '.join(args)}")


@pytest.fixture(scope="package")
def k6_bin():
    """The runner's k6 (k6 v1.8.1 + xk6-kubernetes + bench's extension), built once and cached;
    build.sh links it as .tools/bin/k6, the `k6` harness/k6.py runs."""
    return Path(bash_fn("scenarios/runner/build.sh").stdout.strip())


@pytest.fixture(scope="package")
def env():
    """Root, unshare and ip (the backend's network namespace) or a skip (ci/test/all.sh installs
    the Debian packages of ci/test/scenarios/packages.txt)."""
    missing = [t for t in ("unshare", "nsenter", "ip") if not shutil.which(t)]
    if os.geteuid() != 0 or missing:
        pytest.skip(f"the backend runs in a network namespace: needs root, unshare, nsenter and ip "
                    f"(uid {os.geteuid()}, missing {missing or 'nothing'})")
    with readable_work_dir("bench-routes.") as work:
        yield work


@pytest.fixture(scope="package")
def traefik_bin(env):
    """Traefik from the Go proxy, as the e2e builds it (cold: about 9 min; stamped, so warm is instant)."""
    bash_fn("ci/e2e/build-binaries.sh", "traefik")
    return CACHE / "bin" / "traefik"


# ---- the API server, the Role, the CRDs ----

def runner_role_objects():
    """The namespace, every rule of the contract's runnerRole as charts/bench/templates/loadtest/
    rbac.yaml renders them (the route experiments' too), bound to the user bench-runner."""
    rules = runner_role_rules()
    rbac = "rbac.authorization.k8s.io"
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        {"apiVersion": f"{rbac}/v1", "kind": "Role", "metadata": {"name": "bench-runner", "namespace": NS},
         "rules": rules},
        {"apiVersion": f"{rbac}/v1", "kind": "RoleBinding", "metadata": {"name": "bench-runner", "namespace": NS},
         "roleRef": {"apiGroup": rbac, "kind": "Role", "name": "bench-runner"},
         "subjects": [{"apiGroup": rbac, "kind": "User", "name": "bench-runner"}]},
    ]


def as_list(objects):
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})


@pytest.fixture(scope="package")
def api(env):
    ensure_kube_binaries()
    crds = bash_fn("ci/e2e/build-binaries.sh", "gateway-api-crds").stdout.strip()
    server = BareApiServer(env / "api", {"admin": ["system:masters"], "bench-runner": [], "bench-nobody": []})
    try:
        server.start()
    except RuntimeError as e:
        pytest.fail(str(e))
    try:
        server.kubectl("admin", "apply", "--server-side", "-f", crds)
        server.kubectl("admin", "wait", "--for", "condition=Established", "crd", "--all", "--timeout=60s")
        server.kubectl("admin", "apply", "-f", "-", input=as_list(runner_role_objects()))
    except RuntimeError as e:
        server.stop()
        pytest.fail(str(e))
    yield server
    server.stop()


# ---- the backend in a network namespace of its own ----

@pytest.fixture(scope="package")
def processes(env):
    """The backend's namespace holder and nginx, and Traefik: stopped newest first at teardown."""
    procs = Procs(env / "logs")
    yield procs
    procs.stop_all()


@pytest.fixture(scope="package")
def backend(env, processes):
    """nginx with the chart's backend nginx.conf in a new network namespace, reachable from the host
    at <ip>:8080 over a veth pair (a random /30 in 198.18.0.0/15). Returns the backend's IP."""
    a, b = random.randrange(256), random.randrange(64) * 4
    ip = f"198.18.{a}.{b + 2}"
    veth = f"bnr{os.getpid() % 100000}"
    holder = processes.start("netns", ["unshare", "--net", "sleep", "infinity"])
    ours = os.readlink("/proc/self/ns/net")
    # unshare execs sleep once the namespace exists: wait until the process is in another namespace.
    if not wait_until(5, lambda: os.readlink(f"/proc/{holder.pid}/ns/net") != ours
                      and Path(f"/proc/{holder.pid}/cmdline").read_bytes().startswith(b"sleep")):
        pytest.fail("unshare --net did not make a network namespace within 5 s")
    try:
        must(["ip", "link", "add", veth, "type", "veth", "peer", "name", "bench0", "netns", holder.pid], "ip link add")
        must(["ip", "addr", "add", f"198.18.{a}.{b + 1}/30", "dev", veth], "ip addr add")
        must(["ip", "link", "set", veth, "up"], "ip link set up")
        inside = ["nsenter", "-t", holder.pid, "-n"]
        must([*inside, "ip", "addr", "add", f"{ip}/30", "dev", "bench0"], "ip addr add (namespace)")
        must([*inside, "ip", "link", "set", "bench0", "up"], "ip link set bench0 up")
        must([*inside, "ip", "link", "set", "lo", "up"], "ip link set lo up")
        work = env / "backend"
        work.mkdir()
        src = ROOT / "charts" / "bench" / "files" / "backend"
        must(["sh", src / "make-bodies.sh", work / "bodies"], "make-bodies.sh")
        conf = ((src / "nginx.conf").read_text()
                .replace("/tmp/", f"{work}/")
                .replace("listen BENCH_PORT reuseport;", f"listen {ip}:8080;")
                .replace("BENCH_BODIES_DIR", str(work / "bodies"))
                .replace("worker_processes auto;", "worker_processes 1;"))
        (work / "nginx.conf").write_text(conf)
        nginx = processes.start("backend", [*inside, "nginx", "-c", work / "nginx.conf", "-p", work,
                                            "-e", work / "error.log", "-g", "daemon off;"])
        if not wait_until(10, lambda: nginx.poll() is None and http_ok(f"http://{ip}:8080/healthz")):
            pytest.fail(f"backend nginx not answering on {ip}:8080 within 10 s:\n{processes.logs()}")
        yield ip
    finally:
        # The namespace dies with its last process and the host end of the veth with it; a failed
        # setup may leave the host end behind, so remove it if it is still there. (Traefik, started
        # after the backend, is stopped here too.)
        processes.stop_all()
        if run(["ip", "link", "show", veth]).returncode == 0:
            run(["ip", "link", "delete", veth])


# ---- Services, Gateway and Traefik ----

def gateway_objects(backend_ip, port):
    """The chart's names: bench-backend (port 80 -> 8080) and bench-backend-headless (8080), both on
    the backend; bench-empty has no endpoints (the broken change). EndpointSlices by hand: no
    controllers. The Gateway has the chart's listener for the base route (hostname bench.local) and
    a second one on the same port for the route experiments' hosts (*.routes.bench.local,
    BENCH_GATEWAY_LISTENER): a listener's hostname admits only routes whose hostnames it matches."""
    def service(name, port_, target, headless=False):
        spec = {"ports": [{"name": "http", "port": port_, "targetPort": target}]}
        if headless:
            spec["clusterIP"] = "None"
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NS}, "spec": spec}

    def slice_for(service_name):
        return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": f"{service_name}-a", "namespace": NS,
                             "labels": {"kubernetes.io/service-name": service_name}},
                "addressType": "IPv4", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
                "endpoints": [{"addresses": [backend_ip],
                               "conditions": {"ready": True, "serving": True, "terminating": False}}]}

    gw = "gateway.networking.k8s.io"
    same = {"namespaces": {"from": "Same"}}
    return [
        service("bench-backend", 80, 8080), service("bench-backend-headless", 8080, 8080, headless=True),
        service("bench-empty", 80, 8080),
        slice_for("bench-backend"), slice_for("bench-backend-headless"),
        {"apiVersion": f"{gw}/v1", "kind": "GatewayClass", "metadata": {"name": "traefik"},
         "spec": {"controllerName": "traefik.io/gateway-controller"}},
        {"apiVersion": f"{gw}/v1", "kind": "Gateway", "metadata": {"name": "bench", "namespace": NS},
         "spec": {"gatewayClassName": "traefik", "listeners": [
             {"name": "web", "port": port, "protocol": "HTTP", "hostname": "bench.local", "allowedRoutes": same},
             {"name": "routes", "port": port, "protocol": "HTTP", "hostname": "*.routes.bench.local",
              "allowedRoutes": same}]}},
        {"apiVersion": f"{gw}/v1", "kind": "HTTPRoute", "metadata": {"name": "bench-base", "namespace": NS},
         "spec": {"parentRefs": [{"name": "bench", "sectionName": "web"}], "hostnames": ["bench.local"],
                  "rules": [{"backendRefs": [{"name": "bench-backend", "port": 80}]}]}},
    ]


class Gateway:
    """What the tests talk to: the API server, Traefik's port and process, the work folder."""

    def __init__(self, api, port, traefik, work, processes):
        self.api, self.port, self.traefik, self.work, self.processes = api, port, traefik, work, processes

    def routes_left(self):
        """How many HTTPRoutes and Ingresses carry the route experiments' label."""
        out = self.api.kubectl("admin", "-n", NS, "get", "httproutes,ingresses", "-l", "bench/route-run", "-o", "json")
        return len(json.loads(out.stdout)["items"])

    def k6_env(self, **overrides):
        """The environment of a run as bench-runner: the Gateway's URLs, 50 req/s, 20 connections."""
        url = f"http://127.0.0.1:{self.port}"
        values = dict(BENCH_NAMESPACE=NS, BENCH_KUBECONFIG=self.api.kubeconfig("bench-runner"), BENCH_TARGET_URL=url,
                      BENCH_TARGET_HOST="bench.local", BENCH_URL_GATEWAY=url, BENCH_URL_INGRESS=url,
                      BENCH_GATEWAY_NAME="bench", BENCH_GATEWAY_LISTENER="routes", BENCH_RATE=50,
                      BENCH_CONNECTIONS=20, BENCH_MAX_CONNECTIONS=100)
        values.update(overrides)
        return values

    def start_k6(self, name, script, **overrides):
        """A k6 run in the background (harness/k6.py): the Popen; output in work/NAME/."""
        return k6.start(self.work / name, name, SCENARIOS / script, env=self.k6_env(**overrides))

    def run_k6(self, name, script, timeout=300, **overrides):
        """One k6 run as bench-runner to its end (harness/k6.py Run: rc, stderr, summary, table).
        With ROUTES_KEEP_SUMMARIES=DIR its summary.json is kept as DIR/NAME.json."""
        t0 = time.monotonic()
        run = k6.run(self.work / name, name, SCENARIOS / script, env=self.k6_env(**overrides), timeout=timeout)
        print(f"k6 {name} ({script}): exit {run.rc} in {time.monotonic() - t0:.0f} s")
        keep, summary = os.environ.get("ROUTES_KEEP_SUMMARIES"), run.dir / "summary.json"
        if keep and summary.exists():
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(summary, Path(keep) / f"{name}.json")
        return run


def why_not_zero(run):
    """What a non-zero exit was about: dropped iterations, the runner's own verdict, the routes, stderr's end."""
    path = run.dir / "summary.json"
    s = json.loads(path.read_text()) if path.exists() else {}
    req, runner = s.get("requests", {}), s.get("runner", {})
    return (f"exit {run.rc}: dropped {req.get('dropped_iterations')} ({req.get('dropped_because')}), "
            f"runner cpu_bound {runner.get('cpu_bound')}, paused {runner.get('runtime_bound')}; "
            f"routes {json.dumps(s.get('routes'))}\nstderr:\n{run.stderr[-2000:]}")


@pytest.fixture(scope="package")
def gateway(env, api, backend, traefik_bin, k6_bin, processes):
    """Traefik's Gateway API and Ingress providers on the bare API server; one entrypoint (the
    Gateway listener's port) serves both kinds. No version check, no usage data (nothing leaves)."""
    port = free_port()
    api.kubectl("admin", "apply", "-f", "-", input=as_list(gateway_objects(backend, port)))
    provider_args = []
    for provider in ("kubernetesgateway", "kubernetesingress"):
        provider_args += [f"--providers.{provider}", f"--providers.{provider}.endpoint={api.url}",
                          f"--providers.{provider}.token={api.tokens['admin']}",
                          f"--providers.{provider}.certauthfilepath={api.ca_file}"]
    traefik = processes.start("traefik", [
        traefik_bin, "--global.checknewversion=false", "--global.sendanonymoususage=false",
        f"--entrypoints.web.address=127.0.0.1:{port}", f"--entrypoints.traefik.address=127.0.0.1:{free_port()}",
        *provider_args, "--log.level=INFO"])
    # Ready = the base HTTPRoute serves through the Gateway (the Gateway programmed, the backend reached).
    if not wait_until(60, lambda: traefik.poll() is None and http_ok(f"http://127.0.0.1:{port}/healthz", "bench.local")):
        pytest.fail(f"Traefik did not serve the base HTTPRoute within 60 s:\n{processes.logs()}")
    print(f"API server {api.url}, Traefik on 127.0.0.1:{port}, backend {backend}:8080 in a network namespace")
    return Gateway(api, port, traefik, env, processes)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """A failed test that used the Gateway shows the logs of Traefik, the backend and its namespace."""
    rep = yield
    if rep.failed and "gateway" in getattr(item, "funcargs", {}):
        gateway = item.funcargs["gateway"]
        rep.sections.append(("Traefik's and the backend's logs", gateway.processes.logs()))
        rep.sections.append(("API server log", gateway.api.log("apiserver")))
    return rep

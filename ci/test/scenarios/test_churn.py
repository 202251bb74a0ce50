"""The churn scenarios (dynamic, rolling, podkill, controller-restart, dataplane-scale) against a bare kube-apiserver + etcd: no
controllers, no kubelet, so Deployments get no pods; enough to see what the churn VU does to the API.
The runner is a static-token user holding exactly the Role scenarios/contract.json runnerRole
describes; its effect is read back from the API server (watches, the Deployment, pods). The tests
run in file order, each run once (module fixtures), one churn at a time on the one backend."""
import json
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from harness import k6 as k6run
from harness.apiserver import BIN, BareApiServer
from harness.procs import Procs, wait_until
from harness.role import runner_role_rules

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = json.loads((ROOT / "scenarios" / "contract.json").read_text())
NS = "bench-test"
NS_CTL = "bench-test-ctl"  # the controller's namespace (controller-restart; dataplane-scale's data plane)
DP = "dp"  # the data plane's Deployment there (dataplane-scale)
NS_NGF = "bench-test-ngf"  # NGINX Gateway Fabric's release namespace (dataplane-scale through its NginxProxy)
NGF_DP, NGF_PROXY = "bench-nginx", "bench-proxy-config"  # its NGINX Deployment and the NginxProxy it follows
UP = "up"  # the controller's Deployment there that controller-upgrade rolls
RESTORE = "bench/churn-restore"
RESTARTED = "kubectl.kubernetes.io/restartedAt"


def role_and_binding(namespace, rules):
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "bench-runner", "namespace": namespace}, "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "bench-runner", "namespace": namespace},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "bench-runner"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bench-runner"}]},
    ]


def runner_role():
    """The namespace and the Role bench-runner with every rule of the contract's runnerRole (the
    podkill-only rule too: one user runs all the scenarios), target "backend" as resourceNames
    [bench-backend], the way charts/bench/templates/loadtest/rbac.yaml renders it; the controller's
    rules (controller-restart), the data plane's (dataplane-scale, resourceNames [DP]) and the
    controller workload's (controller-upgrade, resourceNames [UP]) in a Role of the controller's
    namespace NS_CTL; dataplane-scale's through an NginxProxy (read NGF_DP, update NGF_PROXY) in a
    Role of NS_NGF."""
    return {"apiVersion": "v1", "kind": "List", "items": [
        *role_and_binding(NS, runner_role_rules()),
        *role_and_binding(NS_CTL, runner_role_rules("controller") + runner_role_rules("dataplane", DP)
                          + runner_role_rules("upgrade", workload=("deployments", UP))),
        *role_and_binding(NS_NGF, runner_role_rules("dataplane", NGF_DP, via="nginxproxy")
                          + runner_role_rules("parameters", via="nginxproxy", parameters=NGF_PROXY)),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bench-backend", "namespace": NS},
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app.kubernetes.io/component": "backend"}},
                  "template": {"metadata": {"labels": {"app.kubernetes.io/component": "backend"}},
                               "spec": {"containers": [{"name": "nginx", "image": "bench/backend:local"}]}}}},
    ]}


class Kube:
    def __init__(self, api, procs, work):
        self.api, self.procs, self.work = api, procs, work

    def kc(self, *args, check=True, input=None):
        return self.api.kubectl("admin", *args, check=check, input=input)

    def backend(self):
        return json.loads(self.kc("-n", NS, "get", "deployment", "bench-backend", "-o", "json").stdout)

    def backend_state(self):
        """(spec.replicas, the restore record's replicas or "none")."""
        d = self.backend()
        record = (d["metadata"].get("annotations") or {}).get(RESTORE)
        return d["spec"]["replicas"], json.loads(record)["replicas"] if record else "none"

    def replicas(self):
        return self.backend()["spec"]["replicas"]

    def watch(self, name, output, what="deployment/bench-backend"):
        """kubectl get -w into a file, returned once it printed the current state."""
        path = self.work / f"watch-{name}"
        proc = self.procs.start(f"watch-{name}", [BIN / "kubectl", "--kubeconfig", self.api.kubeconfig("admin"),
                                                  "-n", NS, "get", what, "-w", "-o", output], stdout=path)
        wait_until(lambda: path.stat().st_size > 0, 60, f"watch {name} printed the current state")
        return proc, path

    def stop(self, proc):
        # kubectl exits 1 on SIGTERM: its status says nothing here.
        self.procs.stop(proc)


@pytest.fixture(scope="module")
def kube(work):
    """The API server for this module only: stopped before the load-sensitive runs of later modules."""
    procs = Procs(work / "kube-logs")
    api = BareApiServer(work / "kube", {"admin": ["system:masters"], "bench-runner": [], "bench-nobody": []})
    api.start()
    k = Kube(api, procs, work)
    k.kc("apply", "-f", "-", input=json.dumps(runner_role()))
    yield k
    procs.stop_all()
    api.stop()


def churn_env(kube, servers, user="bench-runner", **extra):
    env = dict(BENCH_TARGET_URL=servers.http, BENCH_NAMESPACE=NS, BENCH_DEPLOYMENT="bench-backend",
               BENCH_POD_SELECTOR="app.kubernetes.io/component=backend", BENCH_RATE=50, BENCH_CONNECTIONS=10,
               BENCH_TIMEOUT="500ms", BENCH_KUBECONFIG=kube.api.kubeconfig(user))
    env.update(extra)
    return env


def changes(path):
    """The values a jsonpath watch printed, repeats folded."""
    seq = []
    for line in Path(path).read_text().splitlines():
        if line.strip() and (not seq or seq[-1] != line):
            seq.append(line)
    return seq


def churn_pattern(events):
    """2 (start), then 3,5,3,5,... for EVENTS changes, then 2 again (the scenario restores what it found)."""
    return ["2", *["3" if i % 2 else "5" for i in range(1, events + 1)], "2"]


REPLICAS = 'jsonpath={.spec.replicas}{"\\n"}'


# ---- the Role ----

def role_table():
    want = []
    for r in CONTRACT["runnerRole"]["rules"]:
        group = '""' if r["apiGroup"] == "" else r["apiGroup"]
        scope = {"backend": "the backend Deployment only (`resourceNames`)",
                 "controller": f"all {r['resource']} of the controller's namespace",
                 "dataplane": "the data plane's Deployment only (`resourceNames`), in its namespace",
                 "parameters": "the object the data plane's replicas come from only (`resourceNames`), in its namespace",
                 "stream": "the stream backend's Deployment only (`resourceNames`)",
                 "upgrade": (f"all pods of the controller's namespace" if r["resource"] == "pods" else
                             f"the controller's {r['resource'][:-1]} only (`resourceNames`), in its namespace")}.get(
                     r.get("target"), f"all {r['resource']} of the namespace")
        only = (", ".join(r["onlyFor"]) if r.get("onlyFor") else "every scenario") + (f" (via {r['via']})" if r.get("via") else "")
        if r.get("disruption"):
            only += f" (long-lived: with disruption {r['disruption']})"
        want.append(f"| `{group}` | `{r['resource']}` | {', '.join(r['verbs'])} | {scope} | {only} |")
    return want


def test_role_scenarios_readme_table_equals_contract_runner_role():
    text = (ROOT / "scenarios" / "README.md").read_text()
    m = re.search(r"^<!-- runner-role:.*?$(.*?)^<!-- /runner-role -->", text, re.S | re.M)
    assert m, "no runner-role markers in scenarios/README.md"
    got = [l for l in m[1].splitlines() if l.startswith("| `")]
    assert got == role_table()


def can_runner(kube, verb, what, *extra):
    # "no" exits 1: the answer is the text
    return kube.kc("auth", "can-i", verb, what, *extra, "-n", NS, "--as", "bench-runner", check=False).stdout.strip()


@pytest.mark.parametrize("checks", [
    [("yes", "get", "deployments.apps/bench-backend"), ("yes", "update", "deployments.apps/bench-backend")],
    [("no", "update", "deployments.apps/prometheus"), ("no", "get", "deployments.apps/grafana"),
     ("no", "update", "deployments.apps"), ("no", "list", "deployments.apps"),
     ("no", "patch", "deployments.apps/bench-backend"),
     ("no", "update", "deployments.apps/bench-backend", "--subresource=scale")],
    [("yes", "list", "pods"), ("no", "get", "secrets"), ("no", "create", "pods"), ("no", "update", "pods")],
], ids=["may get and update the backend Deployment by name", "no other Deployment, no list/patch/scale",
        "pods listed read only, nothing else in the namespace"])
def test_role_runner_may(kube, checks):
    got = {" ".join(c[1:]): can_runner(kube, *c[1:]) for c in checks}
    assert got == {" ".join(c[1:]): c[0] for c in checks}


# ---- dynamic ----

def watched_run(kube, k6, servers, name, script, **env):
    """A churn run with a watch of the backend's replicas around it (run.watch: what it printed)."""
    proc, path = kube.watch(name, REPLICAS)
    run = k6(name, script, churn_env(kube, servers, **env))
    kube.stop(proc)
    run.watch = path
    return run


@pytest.fixture(scope="module")
def dynamic(kube, k6, servers):
    return watched_run(kube, k6, servers, "dynamic", "dynamic.js", BENCH_CHURN_PATTERN="3:1s,5:1s",
                       BENCH_DURATION="4500ms")


def test_dynamic_exit_0_with_at_least_4_scale_events(dynamic):
    assert dynamic.rc == 0, dynamic.stderr[-3000:]
    assert dynamic.summary["scale_events"] >= 4


def test_dynamic_the_api_server_saw_replicas_follow_the_pattern_and_come_back_to_2(dynamic):
    assert changes(dynamic.watch) == churn_pattern(dynamic.summary["scale_events"])


def test_dynamic_summary_count_equals_what_nginx_served_while_churning(dynamic):
    assert dynamic.summary["requests"]["total"] == sum(1 for r in dynamic.access if r.from_k6)


def test_dynamic_the_churn_vu_probed_the_path_probes_not_counted_as_load(dynamic):
    assert sum(1 for r in dynamic.access if r.agent == "bench-probe") > 20


def test_dynamic_churn_pattern_in_the_summary(dynamic):
    s = dynamic.summary
    assert s["settings"]["churn_pattern"] == "3:1s,5:1s" and s["scenario"] == "dynamic"


def test_dynamic_normal_end_left_no_restore_record(dynamic, kube):
    assert kube.backend_state() == (2, "none")


# ---- the README's example: scenarios/spike.js, a churn function run once ----

def readme_example():
    """The ```js block under scenarios/README.md's "Write your own experiment"."""
    text = (ROOT / "scenarios" / "README.md").read_text()
    m = re.search(r"^## Write your own experiment$.*?^```js\n(.*?)^```$", text, re.S | re.M)
    assert m, "no ```js block under '## Write your own experiment' in scenarios/README.md"
    return m[1]


def test_spike_the_readme_example_is_the_shipped_file():
    assert readme_example() == (ROOT / "scenarios" / "spike.js").read_text()


def report_python():
    """The report's python, the project's venv (it has jsonschema; dashboards/report/venv.sh builds it when missing)."""
    r = subprocess.run(["bash", "-c", '. "$0/lib/common.sh" && . "$0/dashboards/report/venv.sh" && '
                        'ensure_report_venv >&2 && printf %s "$REPORT_PYTHON"', ROOT], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout, f"ensure_report_venv failed:\n{r.stdout}{r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def spike(kube, k6, servers):
    return watched_run(kube, k6, servers, "spike", "spike.js", BENCH_SPIKE_HOLD="1s", BENCH_DURATION="4s")


def test_spike_exit_0_three_scale_events(spike):
    assert spike.rc == 0, spike.stderr[-3000:]
    assert spike.summary["scale_events"] == 3


def test_spike_the_api_server_saw_5_10_5_once_then_the_backend_put_back(spike, kube):
    assert changes(spike.watch) == ["2", "5", "10", "5", "2"]
    assert kube.backend_state() == (2, "none")


def test_spike_its_own_settings_and_default_path_in_the_summary(spike):
    s = spike.summary
    assert (s["scenario"], s["settings"]["path"], s["settings"]["script"]) == (
        "spike", "/bytes/4k", {"BENCH_SPIKE_REPLICAS": "10", "BENCH_SPIKE_HOLD": "1s"})
    assert "script settings   BENCH_SPIKE_REPLICAS=10   BENCH_SPIKE_HOLD=1s" in spike.table
    # a runner cannot attribute its errors to events (the timeline is in Prometheus): it says where that is
    assert "errors by event: make results (summary.json attribution)" in spike.table, spike.table


def test_spike_every_load_request_on_bytes_4k_and_counted_like_nginx(spike):
    load = [r for r in spike.access if r.from_k6]
    assert load and {r.uri for r in load} == {"/bytes/4k"}
    assert spike.summary["requests"]["total"] == len(load)


def test_spike_the_churn_log_says_each_change(spike):
    assert [l.split(" at +")[0] for l in spike.stderr.splitlines() if l.startswith("churn: scale ")] == [
        "churn: scale replicas=5", "churn: scale replicas=10", "churn: scale replicas=5"]


def test_spike_summary_is_a_valid_bench_summary_v1(spike):
    r = subprocess.run([report_python(), ROOT / "ci" / "test" / "contract.py", "valid", spike.dir / "summary.json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_spike_a_bad_setting_stops_k6_naming_it(k6, kube, servers):
    run = k6("spike-bad", "spike.js", churn_env(kube, servers, BENCH_SPIKE_REPLICAS="1001"))
    assert run.rc != 0 and 'invalid BENCH_SPIKE_REPLICAS="1001": expected a whole number from 1 to 1000' in run.stderr


# ---- two runners at once: the load splits, only one may churn ----

@pytest.fixture(scope="module")
def segments(kube, servers, work):
    proc, path = kube.watch("segments", REPLICAS)
    servers.clear_access()
    # one test id for both, as k6-operator gives a TestRun's runners: the second one's setup must
    # see the first one's restore record as this run's, not as one an earlier run left
    env = churn_env(kube, servers, BENCH_CHURN_PATTERN="3:1s,5:1s", BENCH_DURATION="3500ms", BENCH_TESTID="t-segments")
    procs = {name: k6run.start(work / f"seg-{name}", f"seg-{name}", ROOT / "scenarios" / "dynamic.js", env,
                               ["--execution-segment", seg, "--execution-segment-sequence", "0,1/2,1"])
             for name, seg in (("a", "0:1/2"), ("b", "1/2:1"))}
    runs = {name: k6run.Run(name, work / f"seg-{name}", p.wait(300)) for name, p in procs.items()}
    kube.stop(proc)
    return runs, path, servers.access()


def test_segments_both_runners_exit_0(segments):
    runs, _, _ = segments
    assert {n: r.rc for n, r in runs.items()} == {"a": 0, "b": 0}


def test_segments_exactly_one_runner_churned(segments):
    runs, _, _ = segments
    events = [r.summary["scale_events"] for r in runs.values()]
    assert sum(1 for e in events if e > 0) == 1, events


def test_segments_the_api_server_saw_one_pattern_not_two(segments):
    runs, path, _ = segments
    assert changes(path) == churn_pattern(sum(r.summary["scale_events"] for r in runs.values()))


def test_segments_the_load_split_between_runners_and_nginx_saw_the_sum(segments):
    runs, _, access = segments
    totals = [r.summary["requests"]["total"] for r in runs.values()]
    assert min(totals) > 0 and sum(totals) == sum(1 for r in access if r.from_k6), totals


# ---- rolling ----

@pytest.fixture(scope="module")
def rolling(kube, k6, servers):
    proc, path = kube.watch("rolling", "json")
    run = k6("rolling", "rolling.js", churn_env(kube, servers, BENCH_ROLL_INTERVAL="1s", BENCH_DURATION="3500ms"))
    kube.stop(proc)
    text, objects, decoder, i = path.read_text(), [], json.JSONDecoder(), 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        obj, i = decoder.raw_decode(text, i)
        objects.append(obj)
    run.restarts = {a[RESTARTED] for o in objects
                    if RESTARTED in (a := o["spec"]["template"]["metadata"].get("annotations") or {})}
    return run


def test_rolling_exit_0_each_restart_the_api_saw_is_one_scale_event(rolling):
    assert rolling.rc == 0, rolling.stderr[-3000:]
    events = rolling.summary["scale_events"]
    assert events >= 2 and len(rolling.restarts) == events, f"{len(rolling.restarts)} restarts, {events} events"


def test_rolling_the_pod_template_is_back_as_it_was_and_no_record_left(rolling, kube):
    assert kube.backend_state() == (2, "none")
    assert RESTARTED not in (kube.backend()["spec"]["template"]["metadata"].get("annotations") or {})


# ---- podkill ----

@pytest.fixture(scope="module")
def podkill(kube, k6, servers):
    for i in range(1, 6):
        kube.kc("-n", NS, "run", f"victim-{i}", "--image=bench/backend:local", "--labels=app.kubernetes.io/component=backend")
    kube.kc("-n", NS, "run", "bystander", "--image=bench/backend:local", "--labels=app.kubernetes.io/component=other")
    run = k6("podkill", "podkill.js", churn_env(kube, servers, BENCH_PODKILL_INTERVAL="1s", BENCH_DURATION="3500ms"))
    run.left = len(kube.kc("-n", NS, "get", "pods", "-l", "app.kubernetes.io/component=backend", "-o", "name").stdout.split())
    return run


def test_podkill_exit_0_the_api_lost_one_selected_pod_per_event(podkill):
    assert podkill.rc == 0, podkill.stderr[-3000:]
    events = podkill.summary["scale_events"]
    assert events >= 2 and 5 - podkill.left == events, f"{events} events, {podkill.left} of 5 left"


def test_podkill_pods_outside_bench_pod_selector_untouched(podkill, kube):
    assert kube.kc("-n", NS, "get", "pod", "bystander", "-o", "name", check=False).returncode == 0


# ---- controller-restart ----
# The test plays the controller's Deployment and kubelet: when the runner deletes a controller pod,
# a replacement appears REPLACE_DELAY later and is marked Ready. The load goes to nginx directly, so
# no deletion costs a request here: the zero-error gate passes (the e2e deletes the real Traefik and
# sees it fail).
REPLACE_DELAY = 1.0
CTL = "app.kubernetes.io/name=ctl"


class FakeControllerDeployment:
    """Replaces each deleted pod labelled CTL in NS_CTL after REPLACE_DELAY; events: [(t, what, pod)].
    It talks to the API in-process (BareApiServer.request, 5 s per call): started kubectl processes
    took seconds each on a loaded machine, and one that hung left the thread silent while k6 waited
    for a replacement. Every call's failure is an event the tests print."""

    def __init__(self, kube):
        self.api, self.events, self.stopped, self.n = kube.api, [], threading.Event(), 0
        self.polls, self.last = 0, None  # how often it looked, and what it saw last (failure messages)

    def pod(self, name, namespace=NS_CTL, labels=CTL):
        """A pod as a Deployment's would be, then Ready as a kubelet would say (no kubelet here)."""
        pods = f"/api/v1/namespaces/{namespace}/pods"
        self.api.request("admin", "POST", pods, {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": dict(kv.split("=", 1) for kv in labels.split(","))},
            "spec": {"containers": [{"name": "controller", "image": "bench/traefik:local"}]}}, timeout=5)
        self.api.request("admin", "PATCH", f"{pods}/{name}/status", {"status": {
            "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}, patch=True, timeout=5)

    def names(self):
        items = self.api.request("admin", "GET", f"/api/v1/namespaces/{NS_CTL}/pods",
                                 query={"labelSelector": CTL}, timeout=5)["items"]
        self.polls, self.last = self.polls + 1, sorted(p["metadata"]["name"] for p in items)
        return set(self.last)

    def run(self, known):
        """Until stopped: replaces each pod of KNOWN (the names before the run) and later ones that go."""
        while not self.stopped.is_set():
            try:
                now = self.names()
                for gone in sorted(known - now):
                    self.events.append((time.monotonic(), "deleted", gone))
                    time.sleep(REPLACE_DELAY)
                    self.n += 1
                    self.pod(f"ctl-r{self.n}")
                    now.add(f"ctl-r{self.n}")
                    self.events.append((time.monotonic(), "ready", f"ctl-r{self.n}"))
                # what this poll saw, and the replacements: a second list here would lose a pod
                # deleted between the two calls (the cause of this test's earlier flakes)
                known = now
            except Exception as e:  # noqa: BLE001 - recorded, then tried again: the tests show the events
                self.events.append((time.monotonic(), "failed", repr(e)[:2000]))
            self.stopped.wait(0.1)


@pytest.fixture(scope="module")
def controller_restart(kube, k6, servers):
    fake = FakeControllerDeployment(kube)
    for name in ("ctl-a", "ctl-b"):
        fake.pod(name)
    fake.pod("ctl-bystander", labels="app.kubernetes.io/name=other")
    fake.pod("ctl-elsewhere", namespace=NS)  # the same labels in the release namespace
    # the pods before k6 starts: a kubectl slowed by a loaded machine must not miss the first delete
    thread = threading.Thread(target=fake.run, args=(fake.names(),), daemon=True)
    thread.start()
    try:
        run = k6("controller-restart", "controller-restart.js", churn_env(
            kube, servers, BENCH_CONTROLLER_NAMESPACE=NS_CTL, BENCH_CONTROLLER_SELECTOR=CTL,
            BENCH_CONTROLLER_HOLD="1s", BENCH_DURATION="14s",
            # 40 VUs for 50 req/s: the gate counts dropped iterations, and with 10 a loaded machine
            # (the other test lane building) stalled them all at once ("Insufficient VUs")
            BENCH_CONNECTIONS=40))
    finally:
        fake.stopped.set()
        thread.join(30)
    run.events = fake.events
    run.fake = f"the fake Deployment polled {fake.polls} times, last saw {fake.last}, alive: {thread.is_alive()}"
    run.left = {ns: kube.kc("-n", ns, "get", "pods", "-o", "jsonpath={.items[*].metadata.name}").stdout.split()
                for ns in (NS, NS_CTL)}
    return run


def test_controller_restart_exit_0_every_controller_pod_deleted_once_one_at_a_time(controller_restart):
    run = controller_restart
    assert run.rc == 0, run.stderr[-3000:]
    # ctl-a, its replacement Ready, then ctl-b (sorted names; the replacements came later) and its own
    assert [(what, pod) for _, what, pod in run.events] == [
        ("deleted", "ctl-a"), ("ready", "ctl-r1"), ("deleted", "ctl-b"), ("ready", "ctl-r2")], (run.events, run.fake)
    assert run.summary["scale_events"] == 2


def test_controller_restart_pods_outside_the_selector_or_namespace_untouched(controller_restart):
    left = controller_restart.left
    assert "ctl-bystander" in left[NS_CTL] and "ctl-elsewhere" in left[NS], left


def test_controller_restart_summary_times_each_replacement_no_request_lost_gate_passed(controller_restart):
    c = controller_restart.summary["controller_restart"]
    assert (c["namespace"], c["selector"], c["pods_deleted"], c["unrecovered"]) == (NS_CTL, CTL, 2, 0), c
    # the fake Deployment replaces after REPLACE_DELAY, plus its own kubectl calls (each a process:
    # seconds on a loaded machine); the runner sees it at its next 250 ms poll
    assert c["replaced_ms"]["count"] == 2 and 900 <= c["replaced_ms"]["p50"] <= c["replaced_ms"]["max"] <= 8000, c
    assert c["recovered_ms"] == {"count": 2, "p50": 0, "max": 0}, c
    assert c["requests_lost"] == 0 and c["gate"] == {"max_errors": 0, "passed": True}, c
    assert "zero-error gate: passed" in controller_restart.table


def test_controller_restart_summary_is_a_valid_bench_summary_v1(controller_restart):
    r = subprocess.run([report_python(), ROOT / "ci" / "test" / "contract.py", "valid", controller_restart.dir / "summary.json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_controller_restart_without_a_ready_controller_pod_setup_stops_naming_the_selector(k6, kube, servers):
    run = k6("controller-restart-none", "controller-restart.js", churn_env(
        kube, servers, BENCH_CONTROLLER_NAMESPACE=NS_CTL, BENCH_CONTROLLER_SELECTOR="app.kubernetes.io/name=nothing",
        BENCH_DURATION="2s"))
    assert run.rc != 0
    assert ("no Ready controller pod: none of the pods matching BENCH_CONTROLLER_SELECTOR=app.kubernetes.io/name=nothing "
            f"in namespace {NS_CTL} (BENCH_CONTROLLER_NAMESPACE) is Ready") in run.stderr


def test_controller_restart_the_runner_may_delete_pods_only_in_the_controllers_namespace(kube):
    assert (can_runner(kube, "delete", "pods"), kube.kc("auth", "can-i", "delete", "pods", "-n", NS_CTL, "--as", "bench-runner",
                                                         check=False).stdout.strip()) == ("yes", "yes")
    assert kube.kc("auth", "can-i", "delete", "pods", "-n", "kube-system", "--as", "bench-runner", check=False).stdout.strip() == "no"


# ---- dataplane-scale: the data plane's Deployment scaled step by step, each step once Ready ----
# A bare API server has no Deployment controller and no kubelet: FakeDataplaneDeployment plays them,
# writing the status a real Deployment would reach READY_DELAY after each change of spec.replicas.
# The load goes to nginx directly (no data plane in the path): no step costs a request, and the
# gate passes; the gate-failing run points the load at a server that resets every load request.
READY_DELAY = 1.0


class FakeDataplaneDeployment:
    """Deployment NAME in NAMESPACE and its controller: after each change of spec.replicas it waits
    READY_DELAY and writes status with that many replicas, all Ready, and the generation it saw;
    a change of annotations alone (also a new generation) it observes at once; events:
    [(t, what, replicas)] for replica changes. One GET per poll, and it acts only on what that GET returned (a second
    read per poll could see a later change than the one it acts on: FakeControllerDeployment says
    how that made its first version flaky). In-process API calls (BareApiServer.request), 5 s each."""

    def __init__(self, kube, name=DP, namespace=NS_CTL):
        self.api, self.events, self.stopped = kube.api, [], threading.Event()
        self.path = f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
        self.name, self.namespace, self.polls, self.last = name, namespace, 0, None

    def create(self, replicas=1, ready=True):
        labels = {"app.kubernetes.io/name": self.name}
        d = self.api.request("admin", "POST", f"/apis/apps/v1/namespaces/{self.namespace}/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "proxy", "image": "bench/traefik:local"}]}}}},
            timeout=5)
        if ready:
            self.mark_ready(d["metadata"]["generation"], replicas)

    def mark_ready(self, generation, replicas):
        self.api.request("admin", "PATCH", f"{self.path}/status", {"status": {
            "observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas}}, patch=True, timeout=5)

    def get(self):
        return self.api.request("admin", "GET", self.path, timeout=5)

    def run(self):
        while not self.stopped.is_set():
            try:
                self.poll()
            except Exception as e:  # noqa: BLE001 - recorded, then tried again: the tests show the events
                self.events.append((time.monotonic(), "failed", repr(e)[:2000]))
            self.stopped.wait(0.1)

    def poll(self):
        """One poll: the Deployment as one GET returned it, acted on."""
        d = self.get()
        spec, generation, status = d["spec"]["replicas"], d["metadata"]["generation"], d.get("status") or {}
        self.polls, self.last = self.polls + 1, (generation, spec, status.get("observedGeneration"),
                                                 status.get("readyReplicas"))
        if status.get("readyReplicas") != spec:
            self.events.append((time.monotonic(), "scaled", spec))
            time.sleep(READY_DELAY)
            self.mark_ready(generation, spec)
            self.events.append((time.monotonic(), "ready", spec))
        elif status.get("observedGeneration") != generation:
            # an annotation changed (the restore record: it bumps a Deployment's generation
            # too); the controller observes it at once, no pod changes
            self.mark_ready(generation, spec)


def dataplane_run(kube, k6, servers, name, fake, **env):
    """A dataplane-scale run on FAKE with its controller thread around it; run.events, run.fake
    (what it saw, for failure messages), run.after (the data plane's Deployment after the run)."""
    thread = threading.Thread(target=fake.run, daemon=True)
    thread.start()
    try:
        run = k6(name, "dataplane-scale.js", churn_env(
            kube, servers, BENCH_DATAPLANE_NAMESPACE=fake.namespace, BENCH_DATAPLANE_DEPLOYMENT=fake.name,
            BENCH_DATAPLANE_HOLD="1s", BENCH_CONNECTIONS=40, **env))
    finally:
        fake.stopped.set()
        thread.join(30)
    run.events = fake.events
    run.fake = f"the fake Deployment polled {fake.polls} times, last saw {fake.last}, alive: {thread.is_alive()}"
    run.after = fake.get()
    return run


@pytest.fixture(scope="module")
def dataplane_scale(kube, k6, servers):
    """Gradual from 1 through 3 and back to 1: four steps of one replica, about 2.5 s each (Ready
    after READY_DELAY and a poll, then the 1 s hold), twice that on a loaded machine: 22 s of load."""
    fake = FakeDataplaneDeployment(kube)
    fake.create(replicas=1)
    run = dataplane_run(kube, k6, servers, "dataplane-scale", fake, BENCH_DATAPLANE_LEVELS="3,1",
                        BENCH_DATAPLANE_MODE="gradual", BENCH_DURATION="22s")
    run.backend = kube.backend_state()
    return run


def test_dataplane_scale_exit_0_one_replica_per_step_each_after_the_last_was_ready(dataplane_scale):
    run = dataplane_scale
    assert run.rc == 0, run.stderr[-3000:]
    assert [(what, n) for _, what, n in run.events] == [
        ("scaled", 2), ("ready", 2), ("scaled", 3), ("ready", 3), ("scaled", 2), ("ready", 2),
        ("scaled", 1), ("ready", 1)], (run.events, run.fake)
    assert run.summary["scale_events"] == 4


def test_dataplane_scale_put_back_no_record_left_backend_untouched(dataplane_scale):
    after = dataplane_scale.after
    assert after["spec"]["replicas"] == 1 and RESTORE not in (after["metadata"].get("annotations") or {}), after
    assert dataplane_scale.backend == (2, "none")


def test_dataplane_scale_summary_times_each_step_no_request_lost_gate_passed(dataplane_scale):
    d = dataplane_scale.summary["dataplane_scale"]
    assert (d["namespace"], d["deployment"], d["mode"], d["levels"], d["start_replicas"]) == (
        NS_CTL, DP, "gradual", [3, 1], 1), d
    assert [(st["step"], st["from"], st["to"]) for st in d["steps"]] == [(1, 1, 2), (2, 2, 3), (3, 3, 2), (4, 2, 1)], d
    # the fake writes Ready READY_DELAY after it sees the change (its poll: 100 ms, plus its API
    # calls on a loaded machine); the runner sees it at its next 250 ms poll
    assert all(900 <= st["ready_ms"] <= 8000 for st in d["steps"]), d
    assert (d["levels_reached"], d["unready"], d["ready_ms"]["count"]) == ([3, 1], 0, 4), d
    assert [st["probe_failures"] for st in d["steps"]] == [0, 0, 0, 0], d
    assert d["requests_lost"] == 0 and d["gate"] == {"max_errors": 0, "passed": True}, d
    assert "zero-error gate: passed" in dataplane_scale.table


def test_dataplane_scale_summary_is_a_valid_bench_summary_v1(dataplane_scale):
    r = subprocess.run([report_python(), ROOT / "ci" / "test" / "contract.py", "valid", dataplane_scale.dir / "summary.json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_dataplane_scale_gate_fails_exit_99_when_load_requests_are_lost(kube, k6, servers):
    """The gate broken on purpose: every load request (and probe) reset by the server, which answers
    only setup's check; abrupt 1 -> 2 -> 1. The data plane is put back all the same."""
    fake = FakeDataplaneDeployment(kube)  # the same Deployment, put back at 1 by the run before
    run = dataplane_run(kube, k6, servers, "dataplane-scale-gate", fake, BENCH_TARGET_URL=servers.url("reset"),
                        BENCH_DATAPLANE_LEVELS="2,1", BENCH_DATAPLANE_MODE="abrupt", BENCH_DURATION="10s")
    assert run.rc == 99, run.stderr[-3000:]
    d = run.summary["dataplane_scale"]
    assert d["requests_lost"] > 0 and d["requests_lost"] == sum(run.summary["errors"].values()), d
    assert d["gate"] == {"max_errors": 0, "passed": False}, d
    assert [(st["from"], st["to"]) for st in d["steps"]] == [(1, 2), (2, 1)] and all(st["probe_failures"] > 0 for st in d["steps"]), d
    assert "zero-error gate: FAILED" in run.table
    assert run.after["spec"]["replicas"] == 1 and RESTORE not in (run.after["metadata"].get("annotations") or {}), run.after


def test_dataplane_scale_without_a_ready_replica_setup_stops_naming_the_deployment(kube, k6, servers):
    fake = FakeDataplaneDeployment(kube)  # the one Deployment the runner may read: its pods all gone
    fake.mark_ready(fake.get()["metadata"]["generation"], 0)
    run = k6("dataplane-scale-idle", "dataplane-scale.js", churn_env(
        kube, servers, BENCH_DATAPLANE_NAMESPACE=NS_CTL, BENCH_DATAPLANE_DEPLOYMENT=DP, BENCH_DURATION="2s"))
    assert run.rc != 0
    assert (f"dataplane-scale: the data plane's Deployment {NS_CTL}/{DP} (BENCH_DATAPLANE_NAMESPACE/"
            "BENCH_DATAPLANE_DEPLOYMENT) has no Ready replica") in run.stderr


def test_dataplane_scale_the_runner_may_get_and_update_only_that_deployment(kube):
    def can(verb, what, ns=NS_CTL):
        return kube.kc("auth", "can-i", verb, what, "-n", ns, "--as", "bench-runner", check=False).stdout.strip()
    assert [can("get", f"deployments.apps/{DP}"), can("update", f"deployments.apps/{DP}")] == ["yes", "yes"]
    assert [can("update", "deployments.apps/other"), can("list", "deployments.apps"), can("patch", f"deployments.apps/{DP}"),
            can("update", f"deployments.apps/{DP}", "kube-system")] == ["no", "no", "no", "no"]


# ---- dataplane-scale through NGINX Gateway Fabric's NginxProxy ----
# NGF writes its NGINX Deployment's spec back from the NginxProxy on any change (charts/bench/README.md,
# "dataplane-scale"), so the runner sets the NginxProxy's spec.kubernetes.deployment.replicas and only
# reads the Deployment. The NginxProxy CRD is bench's stand-in (ci/test/harness/nginxproxy-crd.yaml);
# FakeNginxGatewayFabric plays NGF and the Deployment controller.
NGINXPROXY_CRD = ROOT / "ci" / "test" / "harness" / "nginxproxy-crd.yaml"
NGF_ENV = dict(BENCH_DATAPLANE_PARAMETERS_KIND="NginxProxy.gateway.nginx.org", BENCH_DATAPLANE_PARAMETERS_NAME=NGF_PROXY,
               BENCH_DATAPLANE_PARAMETERS_REPLICAS="spec.kubernetes.deployment.replicas")
# NGF settings the runner must leave as they are (the stand-in keeps fields it does not describe)
NGF_OTHER = {"logging": {"errorLevel": "info"}, "kubernetes": {"service": {"type": "ClusterIP"}}}


class FakeNginxGatewayFabric(FakeDataplaneDeployment):
    """NGINX Gateway Fabric on top of FakeDataplaneDeployment (Deployment NGF_DP in NS_NGF): each poll
    first reads NginxProxy NGF_PROXY and, when its spec.kubernetes.deployment.replicas differ from the
    Deployment's spec.replicas, writes them there (event "copied"), as NGF's provisioner rewrites the
    Deployment's spec from the NginxProxy; the Deployment then becomes Ready READY_DELAY later."""

    def __init__(self, kube):
        super().__init__(kube, name=NGF_DP, namespace=NS_NGF)
        self.proxy_path = f"/apis/gateway.nginx.org/v1alpha2/namespaces/{NS_NGF}/nginxproxies/{NGF_PROXY}"

    def create_proxy(self, replicas=1):
        spec = json.loads(json.dumps(NGF_OTHER))
        spec["kubernetes"]["deployment"] = {"replicas": replicas, "container": {"image": {"repository": "nginx"}}}
        self.api.request("admin", "POST", f"/apis/gateway.nginx.org/v1alpha2/namespaces/{NS_NGF}/nginxproxies", {
            "apiVersion": "gateway.nginx.org/v1alpha2", "kind": "NginxProxy",
            "metadata": {"name": NGF_PROXY, "namespace": NS_NGF}, "spec": spec}, timeout=5)

    def proxy(self):
        return self.api.request("admin", "GET", self.proxy_path, timeout=5)

    def set_proxy_replicas(self, replicas):
        self.api.request("admin", "PATCH", self.proxy_path, {"spec": {"kubernetes": {"deployment": {"replicas": replicas}}}},
                         patch=True, timeout=5)

    def poll(self):
        want = self.proxy()["spec"]["kubernetes"]["deployment"].get("replicas")
        d = self.get()
        if want is not None and d["spec"]["replicas"] != want:
            d["spec"]["replicas"] = want
            self.api.request("admin", "PUT", self.path, d, timeout=5)
            self.events.append((time.monotonic(), "copied", want))
        super().poll()


@pytest.fixture(scope="module")
def ngf(kube):
    """The stand-in CRD, NGF's NGINX Deployment at 1 Ready replica and its NginxProxy at 1."""
    kube.kc("apply", "-f", NGINXPROXY_CRD)
    kube.kc("wait", "--for", "condition=Established", "crd/nginxproxies.gateway.nginx.org", "--timeout", "60s")
    fake = FakeNginxGatewayFabric(kube)
    fake.create(replicas=1)
    fake.create_proxy(replicas=1)
    return fake


@pytest.fixture(scope="module")
def ngf_scale(kube, k6, servers, ngf):
    """Gradual from 1 to 2 and back to 1 through the NginxProxy: two steps of about 2.5 s."""
    run = dataplane_run(kube, k6, servers, "dataplane-scale-ngf", ngf, BENCH_DATAPLANE_LEVELS="2,1",
                        BENCH_DATAPLANE_MODE="gradual", BENCH_DURATION="16s", **NGF_ENV)
    run.proxy = ngf.proxy()
    return run


def test_ngf_exit_0_the_runner_set_the_nginxproxy_ngf_copied_each_step_then_it_was_ready(ngf_scale):
    run = ngf_scale
    assert run.rc == 0, run.stderr[-3000:]
    assert [(what, n) for _, what, n in run.events] == [
        ("copied", 2), ("scaled", 2), ("ready", 2), ("copied", 1), ("scaled", 1), ("ready", 1)], (run.events, run.fake)
    assert run.summary["scale_events"] == 2


def test_ngf_put_back_on_the_nginxproxy_its_other_settings_and_the_deployment_untouched(ngf_scale):
    proxy, after = ngf_scale.proxy, ngf_scale.after
    assert proxy["spec"]["kubernetes"]["deployment"]["replicas"] == 1, proxy
    assert RESTORE not in (proxy["metadata"].get("annotations") or {}), proxy
    assert (proxy["spec"]["logging"], proxy["spec"]["kubernetes"]["service"]) == (
        NGF_OTHER["logging"], NGF_OTHER["kubernetes"]["service"]), proxy
    assert after["spec"]["replicas"] == 1 and RESTORE not in (after["metadata"].get("annotations") or {}), after
    assert "through NginxProxy" in ngf_scale.stdout + ngf_scale.stderr


def test_ngf_summary_says_the_nginxproxy_was_scaled_and_times_each_step_on_the_deployment(ngf_scale):
    d = ngf_scale.summary["dataplane_scale"]
    assert (d["namespace"], d["deployment"], d["scaled"], d["start_replicas"]) == (
        NS_NGF, NGF_DP, f"NginxProxy {NS_NGF}/{NGF_PROXY} spec.kubernetes.deployment.replicas", 1), d
    assert [(st["step"], st["from"], st["to"]) for st in d["steps"]] == [(1, 1, 2), (2, 2, 1)], d
    assert all(900 <= st["ready_ms"] <= 8000 for st in d["steps"]), d  # NGF's copy, then READY_DELAY
    assert d["requests_lost"] == 0 and d["gate"]["passed"], d
    assert f"Deployment {NS_NGF}/{NGF_DP} through NginxProxy {NS_NGF}/{NGF_PROXY}" in ngf_scale.table
    r = subprocess.run([report_python(), ROOT / "ci" / "test" / "contract.py", "valid", ngf_scale.dir / "summary.json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_ngf_setup_stops_when_the_nginxproxy_does_not_set_the_deployments_replicas(kube, k6, servers, ngf):
    """No NGF running: the NginxProxy says 3, the Deployment stays at 1 (as when another NginxProxy
    overrides it, or an autoscaler moves the replicas)."""
    ngf.set_proxy_replicas(3)
    try:
        run = k6("dataplane-scale-ngf-stale", "dataplane-scale.js", churn_env(
            kube, servers, BENCH_DATAPLANE_NAMESPACE=NS_NGF, BENCH_DATAPLANE_DEPLOYMENT=NGF_DP, BENCH_DURATION="2s", **NGF_ENV))
    finally:
        ngf.set_proxy_replicas(1)
    assert run.rc != 0
    assert (f"dataplane-scale: NginxProxy {NS_NGF}/{NGF_PROXY} has spec.kubernetes.deployment.replicas 3 but the data "
            f"plane's Deployment {NS_NGF}/{NGF_DP} (BENCH_DATAPLANE_NAMESPACE/BENCH_DATAPLANE_DEPLOYMENT) has spec.replicas 1 "
            "10 s later: that object does not set the Deployment's replicas") in run.stderr, run.stderr[-3000:]


def test_ngf_the_runner_may_update_only_that_nginxproxy_and_only_read_the_deployment(kube):
    def can(verb, what):
        return kube.kc("auth", "can-i", verb, what, "-n", NS_NGF, "--as", "bench-runner", check=False).stdout.strip()
    assert [can("get", f"nginxproxies.gateway.nginx.org/{NGF_PROXY}"), can("update", f"nginxproxies.gateway.nginx.org/{NGF_PROXY}"),
            can("get", f"deployments.apps/{NGF_DP}")] == ["yes", "yes", "yes"]
    assert [can("update", f"deployments.apps/{NGF_DP}"), can("patch", f"nginxproxies.gateway.nginx.org/{NGF_PROXY}"),
            can("update", "nginxproxies.gateway.nginx.org/other"), can("list", "nginxproxies.gateway.nginx.org")] == [
        "no", "no", "no", "no"]


# ---- controller-upgrade: the controller's Deployment rolled, each pod's termination seen ----
# A bare API server has no Deployment controller, kubelet or garbage collector: FakeRollout plays
# them. On a new template (generation past status.observedGeneration) it replaces the pods one at a
# time, as maxSurge 1 / maxUnavailable 0 does: a new pod Ready ROLL_DELAY later, then the old one
# deleted; old pods carry a finalizer, so they stay terminating (deletionTimestamp set) for
# TERMINATING_FOR before the fake lets them go, as a kubelet's grace period would.
ROLL_DELAY = 1.0
TERMINATING_FOR = 0.5
HOLD = "bench.test/terminating"


class FakeRollout:
    """Deployment UP in NS_CTL, its pods and its rollouts; events: [(t, what, pod)]. One GET of the
    Deployment per poll, acted on as read (FakeControllerDeployment says why). In-process API calls."""

    def __init__(self, kube):
        self.api, self.events, self.stopped, self.n = kube.api, [], threading.Event(), 0
        self.path = f"/apis/apps/v1/namespaces/{NS_CTL}/deployments/{UP}"
        self.pods_path = f"/api/v1/namespaces/{NS_CTL}/pods"
        self.labels = {"app.kubernetes.io/name": UP}
        self.polls, self.last = 0, None

    def create(self):
        d = self.api.request("admin", "POST", f"/apis/apps/v1/namespaces/{NS_CTL}/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": UP, "namespace": NS_CTL},
            "spec": {"replicas": 2, "selector": {"matchLabels": self.labels},
                     "template": {"metadata": {"labels": self.labels},
                                  "spec": {"containers": [{"name": "proxy", "image": "bench/proxy:local"},
                                                          {"name": "controller", "image": "bench/traefik:local"}]}}}},
            timeout=5)
        for name in ("up-a", "up-b"):
            self.pod(name)
        self.pod("up-bystander", labels={"app.kubernetes.io/name": "other"})
        self.status(d["metadata"]["generation"])

    def pod(self, name, labels=None):
        self.api.request("admin", "POST", self.pods_path, {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels or self.labels, "finalizers": [HOLD]},
            "spec": {"containers": [{"name": "controller", "image": "bench/traefik:local"}]}}, timeout=5)
        self.api.request("admin", "PATCH", f"{self.pods_path}/{name}/status", {"status": {
            "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}, patch=True, timeout=5)

    def status(self, generation):
        self.api.request("admin", "PATCH", f"{self.path}/status", {"status": {
            "observedGeneration": generation, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2,
            "availableReplicas": 2}}, patch=True, timeout=5)

    def get(self):
        return self.api.request("admin", "GET", self.path, timeout=5)

    def current(self):
        items = self.api.request("admin", "GET", self.pods_path, query={"labelSelector": f"app.kubernetes.io/name={UP}"},
                                 timeout=5)["items"]
        return sorted(p["metadata"]["name"] for p in items if not p["metadata"].get("deletionTimestamp"))

    def replace(self, old):
        self.n += 1
        time.sleep(ROLL_DELAY)
        self.pod(f"up-r{self.n}")
        self.events.append((time.monotonic(), "ready", f"up-r{self.n}"))
        self.api.request("admin", "DELETE", f"{self.pods_path}/{old}", timeout=5)
        self.events.append((time.monotonic(), "deleted", old))
        time.sleep(TERMINATING_FOR)
        self.api.request("admin", "PATCH", f"{self.pods_path}/{old}", {"metadata": {"finalizers": None}}, patch=True, timeout=5)

    def step(self):
        """One poll: a new template is rolled out whole before the next poll."""
        d = self.get()
        generation, status = d["metadata"]["generation"], d.get("status") or {}
        self.polls, self.last = self.polls + 1, (generation, status.get("observedGeneration"))
        if status.get("observedGeneration") != generation:
            self.events.append((time.monotonic(), "rollout", generation))
            for old in self.current():
                self.replace(old)
            self.status(generation)
            self.events.append((time.monotonic(), "complete", generation))

    def run(self):
        while not self.stopped.is_set():
            try:
                self.step()
            except Exception as e:  # noqa: BLE001 - recorded, then tried again: the tests show the events
                self.events.append((time.monotonic(), "failed", repr(e)[:2000]))
            self.stopped.wait(0.1)


def upgrade_run(kube, k6, servers, name, fake, **env):
    """A controller-upgrade run with FAKE's thread around it; run.events, run.fake, run.after."""
    thread = threading.Thread(target=fake.run, daemon=True)
    thread.start()
    try:
        run = k6(name, "controller-upgrade.js", churn_env(
            kube, servers, BENCH_UPGRADE_NAMESPACE=NS_CTL, BENCH_UPGRADE_NAME=UP, BENCH_UPGRADE_HOLD="1s",
            BENCH_UPGRADE_READY_TIMEOUT="30s", BENCH_CONNECTIONS=40, **env))
    finally:
        fake.stopped.set()
        thread.join(30)
    run.events = fake.events
    run.fake = f"the fake rollout polled {fake.polls} times, last saw {fake.last}, alive: {thread.is_alive()}"
    run.after = fake.get()
    return run


def first_rollout(events):
    """(what, pod) of the events up to the first rollout's completion (the image's restore rolls again)."""
    out = []
    for _, what, arg in events:
        out.append((what, arg))
        if what == "complete":
            break
    return out


@pytest.fixture(scope="module")
def controller_upgrade(kube, k6, servers):
    """A new image on container `controller`: two pods replaced one at a time, about 1.5 s each,
    twice that on a loaded machine; 16 s of load."""
    fake = FakeRollout(kube)
    fake.create()
    run = upgrade_run(kube, k6, servers, "controller-upgrade", fake, BENCH_UPGRADE_CONTAINER="controller",
                      BENCH_UPGRADE_IMAGE="bench/traefik:next", BENCH_UPGRADE_FROM="bench/traefik:local",
                      BENCH_DURATION="16s")
    run.backend = kube.backend_state()
    return run


def test_controller_upgrade_exit_0_each_pod_replaced_once_new_ready_before_old_terminating(controller_upgrade):
    run = controller_upgrade
    assert run.rc == 0, run.stderr[-3000:]
    assert [e for e in first_rollout(run.events) if e[0] != "rollout"] == [
        ("ready", "up-r1"), ("deleted", "up-a"), ("ready", "up-r2"), ("deleted", "up-b"), ("complete", 2)], (run.events, run.fake)
    # the rollout, two old pods terminating, two new pods Ready: five events the report attributes errors to
    assert run.summary["scale_events"] == 5


def test_controller_upgrade_summary_times_each_pod_the_rollout_no_request_lost_gate_passed(controller_upgrade):
    u = controller_upgrade.summary["controller_upgrade"]
    assert (u["kind"], u["namespace"], u["name"], u["container"], u["image_from"], u["image_to"], u["annotation"],
            u["at_end"]) == ("Deployment", NS_CTL, UP, "controller", "bench/traefik:local", "bench/traefik:next",
                             "bench/restartedAt", "image_restored"), u
    assert (u["rollouts"], u["incomplete"], u["pods_terminating"], u["pods_ready"]) == (1, 0, 2, 2), u
    # the fake's ROLL_DELAY per pod, plus its API calls on a loaded machine; the runner polls every 250 ms
    steps = u["steps"]
    assert [st["step"] for st in steps] == [1, 2], u
    assert all(900 <= st["new_ready_ms"] <= st["old_terminating_ms"] <= 12000 for st in steps), u
    assert steps[0]["old_terminating_ms"] < steps[1]["new_ready_ms"] <= u["rollout_ms"] <= 15000, u
    assert u["requests_lost"] == 0 and u["gate"] == {"max_errors": 0, "passed": True}, u
    assert "zero-error gate: passed" in controller_upgrade.table


def test_controller_upgrade_image_put_back_no_record_annotation_left_backend_untouched(controller_upgrade):
    after = controller_upgrade.after
    template = after["spec"]["template"]
    assert [c["image"] for c in template["spec"]["containers"]] == ["bench/proxy:local", "bench/traefik:local"], after
    assert RESTORE not in (after["metadata"].get("annotations") or {}), after
    assert "bench/restartedAt" in template["metadata"]["annotations"], after
    assert controller_upgrade.backend == (2, "none")
    assert "restored Deployment" in controller_upgrade.stderr + controller_upgrade.stdout


def test_controller_upgrade_summary_is_a_valid_bench_summary_v1(controller_upgrade):
    r = subprocess.run([report_python(), ROOT / "ci" / "test" / "contract.py", "valid", controller_upgrade.dir / "summary.json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_controller_upgrade_gate_fails_exit_99_when_load_requests_are_lost_annotation_alone_left(kube, k6, servers):
    """The gate broken on purpose: every load request reset by the server, which answers only setup's
    check; no image, so the annotation alone rolls the pods and stays (no record to put anything back)."""
    fake = FakeRollout(kube)  # the same Deployment, rolled back to its image by the run before
    fake.step()  # that rollout finished, if the last fake stopped before it saw the restore
    before = fake.get()["spec"]["template"]["metadata"]["annotations"]["bench/restartedAt"]
    run = upgrade_run(kube, k6, servers, "controller-upgrade-gate", fake, BENCH_TARGET_URL=servers.url("reset"),
                      BENCH_DURATION="12s")
    assert run.rc == 99, run.stderr[-3000:]
    u = run.summary["controller_upgrade"]
    assert u["requests_lost"] > 0 and u["requests_lost"] == sum(run.summary["errors"].values()), u
    assert u["gate"] == {"max_errors": 0, "passed": False} and "zero-error gate: FAILED" in run.table, u
    assert (u["image_to"], u["image_from"], u["container"], u["at_end"], u["pods_ready"]) == (None, None, None, "left_rolled", 2), u
    template = run.after["spec"]["template"]
    assert template["metadata"]["annotations"]["bench/restartedAt"] != before, run.after
    assert template["spec"]["containers"][1]["image"] == "bench/traefik:local", run.after
    assert RESTORE not in (run.after["metadata"].get("annotations") or {}), run.after


def test_controller_upgrade_without_the_container_setup_stops_naming_it(kube, k6, servers):
    run = k6("controller-upgrade-nocontainer", "controller-upgrade.js", churn_env(
        kube, servers, BENCH_UPGRADE_NAMESPACE=NS_CTL, BENCH_UPGRADE_NAME=UP, BENCH_UPGRADE_CONTAINER="nginx",
        BENCH_UPGRADE_IMAGE="bench/nginx:next", BENCH_DURATION="2s"))
    assert run.rc != 0
    assert (f'controller-upgrade: the controller\'s Deployment {NS_CTL}/{UP} (BENCH_UPGRADE_KIND/BENCH_UPGRADE_NAMESPACE/'
            'BENCH_UPGRADE_NAME) has no container "nginx" (BENCH_UPGRADE_CONTAINER, needed with BENCH_UPGRADE_IMAGE); '
            'it has proxy, controller') in run.stderr


def test_controller_upgrade_the_runner_may_get_and_update_only_that_workload(kube):
    def can(verb, what, ns=NS_CTL):
        return kube.kc("auth", "can-i", verb, what, "-n", ns, "--as", "bench-runner", check=False).stdout.strip()
    assert [can("get", f"deployments.apps/{UP}"), can("update", f"deployments.apps/{UP}"), can("list", "pods")] == ["yes"] * 3
    assert [can("update", "deployments.apps/other"), can("patch", f"deployments.apps/{UP}"),
            can("update", f"daemonsets.apps/{UP}"), can("update", f"deployments.apps/{UP}", "kube-system")] == ["no"] * 4


# ---- putting the backend back ----

def start_churn(kube, servers, work, name):
    """A dynamic run that would hold 3 replicas for a minute; returned once the API shows 3."""
    proc = k6run.start(work / name, name, ROOT / "scenarios" / "dynamic.js",
                       churn_env(kube, servers, BENCH_CHURN_PATTERN="3:1m", BENCH_DURATION="60s"))
    try:
        wait_until(lambda: kube.replicas() == 3, 120, f"{name}: the churn scaled the backend to 3")
    except TimeoutError:
        proc.kill()
        proc.wait()
        raise
    return proc


@pytest.fixture(scope="module")
def killed(kube, k6, servers, work):
    """A runner killed mid-run (SIGKILL: no teardown, like a deleted pod past its grace or an OOM
    kill) leaves the backend changed with the record of its starting state; the next run's setup
    puts it back before its own churn starts."""
    proc_watch, path = kube.watch("killed", REPLICAS)
    proc = start_churn(kube, servers, work, "killed")
    proc.kill()
    proc.wait()
    state_after_kill = kube.backend_state()
    run = k6("after-kill", "dynamic.js", churn_env(kube, servers, BENCH_CHURN_PATTERN="4:1s", BENCH_DURATION="2s"))
    kube.stop(proc_watch)
    run.state_after_kill, run.watch = state_after_kill, path
    return run


def test_killed_runner_the_backend_stays_at_3_the_record_on_it_says_2(killed):
    assert killed.state_after_kill == (3, 2)


def test_killed_runner_the_next_runs_setup_restored_2_before_its_churn_set_4(killed):
    assert changes(killed.watch) == ["2", "3", "2", "4", "2"]


def test_killed_runner_the_next_run_logged_what_it_restored(killed):
    assert ("setup (left by an earlier run): restored Deployment bench-test/bench-backend: replicas 3 -> 2 "
            "(recorded by t-killed") in killed.stderr


def test_killed_runner_no_record_left_after_the_next_run(killed, kube):
    assert killed.rc == 0, killed.stderr[-3000:]
    assert kube.backend_state() == (2, "none")


def test_stopped_run_exit_105_teardown_put_the_backend_back(kube, servers, work):
    """A run stopped early (SIGTERM, as Kubernetes stops a runner pod, or Ctrl-C) still runs
    teardown, which restores (k6 does not print teardown's console output then: the API is the
    evidence)."""
    proc = start_churn(kube, servers, work, "stopped")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 105
    assert kube.backend_state() == (2, "none")


def test_static_restore_exit_0_backend_back_to_2_no_record(kube, k6, servers, work):
    """A static run (no churn) with API access also restores what a killed churn run left."""
    proc = start_churn(kube, servers, work, "killed-static")
    proc.kill()
    proc.wait()
    run = k6("static-restore", "static.js", churn_env(kube, servers, BENCH_DURATION="1s"))
    assert run.rc == 0, run.stderr[-3000:]
    assert kube.backend_state() == (2, "none")


def test_rbac_without_the_role_the_run_stops_with_what_the_runner_needs(kube, k6, servers):
    run = k6("forbidden", "dynamic.js", churn_env(kube, servers, user="bench-nobody", BENCH_DURATION="2s"))
    assert run.rc != 0
    assert "forbidden" in run.stderr
    assert "The runner needs get and update on Deployment bench-test/bench-backend" in run.stderr


# ---- endpoint convergence with a known answer ----
# The test plays kubelet and ingress controller: "pods" are nginx servers naming themselves in
# X-Bench-Pod behind a front nginx (the path under test); the test marks a pod Ready in the API and
# only ADD_DELAY later adds it to the front's upstream, then marks another not Ready and removes it
# REMOVE_DELAY later. The churn VU must measure about those delays. These delays are the known
# answer, not waits for something to be ready.
ADD_DELAY = 1.5
REMOVE_DELAY = 1.0


class Front:
    def __init__(self, work, procs):
        from harness.procs import free_port
        self.dir = work / "front"
        (self.dir / "tmp").mkdir(parents=True)
        self.port = free_port()
        self.pods = {p: free_port() for p in "abc"}
        self.procs = procs

    def write(self, *pods):
        d = self.dir
        servers = "".join(f"    server 127.0.0.1:{self.pods[p]};\n" for p in pods)
        pod_servers = "".join(f'  server {{ listen 127.0.0.1:{port}; location / {{ add_header X-Bench-Pod conv-{p} always; '
                              f'return 200 "{p}\\n"; }} }}\n' for p, port in self.pods.items())
        (d / "nginx.conf").write_text(f"""pid {d}/nginx.pid;
error_log {d}/error.log warn;
worker_processes 1;
events {{ worker_connections 1024; }}
http {{
  access_log {d}/access.log;
  client_body_temp_path {d}/tmp;
  proxy_temp_path {d}/tmp;
  fastcgi_temp_path {d}/tmp;
  uwsgi_temp_path {d}/tmp;
  scgi_temp_path {d}/tmp;
  upstream pods {{
{servers}  }}
  server {{
    listen 127.0.0.1:{self.port};
    location / {{ proxy_pass http://pods; }}
  }}
{pod_servers}}}
""")

    def nginx(self, *args):
        return ["nginx", "-c", self.dir / "nginx.conf", "-p", self.dir, "-e", self.dir / "error.log", *args]

    def set_upstream(self, *pods):
        """The "controller" programs the path."""
        self.write(*pods)
        result = subprocess.run(list(map(str, self.nginx("-s", "reload"))), capture_output=True, text=True)
        assert result.returncode == 0, result.stderr

    def probed(self):
        log = self.dir / "access.log"
        return log.exists() and "bench-probe" in log.read_text()


@pytest.fixture(scope="module")
def convergence(kube, servers, work):
    import time
    from harness.procs import wait_port
    front = Front(work, kube.procs)
    front.write("a", "b")
    kube.procs.start("front-nginx", front.nginx("-g", "daemon off;"))
    wait_port(front.port)

    def pod(name):
        kube.kc("-n", NS, "run", name, "--image=bench/backend:local", "--labels=app.kubernetes.io/component=conv")

    def ready(name, status):
        """The "kubelet" reports readiness."""
        kube.kc("-n", NS, "patch", "pod", name, "--subresource=status", "--type=merge", "-p",
                json.dumps({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": status}]}}))

    for name in ("conv-a", "conv-b"):
        pod(name)
        ready(name, "True")
    env = churn_env(kube, servers, BENCH_TARGET_URL=f"http://127.0.0.1:{front.port}",
                    BENCH_POD_SELECTOR="app.kubernetes.io/component=conv", BENCH_CHURN_PATTERN="2:1m",
                    BENCH_DURATION="9s")
    proc = k6run.start(work / "convergence", "convergence", ROOT / "scenarios" / "dynamic.js", env)
    try:
        wait_until(front.probed, 120, "the churn VU probed the front")
        time.sleep(0.5)  # the first poll (the baseline: conv-a, conv-b) comes before the first probe
        pod("conv-c")
        ready("conv-c", "True")
        time.sleep(ADD_DELAY)
        front.set_upstream("a", "b", "c")
        time.sleep(1)
        ready("conv-a", "False")
        time.sleep(REMOVE_DELAY)
        front.set_upstream("b", "c")
        rc = proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return k6run.Run("convergence", work / "convergence", rc)


def test_convergence_exit_0_one_added_and_one_removed_endpoint_measured(convergence):
    assert convergence.rc == 0, convergence.stderr[-3000:]
    c = convergence.summary["convergence_ms"]
    assert c["added"]["count"] == 1 and c["removed"]["count"] == 1, c


def test_convergence_added_about_add_delay_after_ready(convergence):
    # The poll (250 ms) and probe (100 ms) intervals and nginx reloads blur the known delays.
    p50 = convergence.summary["convergence_ms"]["added"]["p50"]
    assert 1100 <= p50 <= 2500, p50


def test_convergence_removed_about_remove_delay_after_not_ready(convergence):
    # The start is the poll that first sees the pod not Ready: a late poll on a busy machine shortens
    # the measured time (778 ms quiet; 501 and 402 ms at load average 8-10, 2026-11-22/23).
    p50 = convergence.summary["convergence_ms"]["removed"]["p50"]
    assert 300 <= p50 <= 2000, p50


# ---- scenarios/examples/rate-spike.js: a load shape in k6's own words (experiment({load})) ----

@pytest.fixture(scope="module")
def rate_spike(kube, k6, servers):
    return watched_run(kube, k6, servers, "rate-spike", "examples/rate-spike.js", BENCH_RATE=20, BENCH_DURATION="6s")


def test_rate_spike_exit_0_backend_5_2_5_then_put_back(rate_spike, kube):
    assert rate_spike.rc == 0, rate_spike.stderr[-3000:]
    assert rate_spike.summary["scale_events"] == 3
    assert changes(rate_spike.watch) == ["2", "5", "2", "5", "2"]
    assert kube.backend_state() == (2, "none")


def test_rate_spike_its_shape_is_the_target_the_summary_states(rate_spike):
    """20 req/s for 2 s, 100 for 2 s, 20 for 2 s: 280 requests planned, 46.7 req/s on average."""
    s = rate_spike.summary
    assert (s["scenario"], s["settings"]["rate"], s["settings"]["duration_s"]) == ("rate-spike", 46.7, 6), s["settings"]
    assert abs(s["requests"]["total"] - 280) <= 3 and s["requests"]["rate_target"] == 46.7, s["requests"]
    assert s["requests"]["total"] == sum(1 for r in rate_spike.access if r.from_k6)
    assert f"rate-spike: p99 {s['latency_ms']['p99']} ms through a 5x spike (limit 500 ms)" in rate_spike.table



def test_rate_spike_the_readme_load_shape_example_is_the_shipped_file():
    text = (ROOT / "scenarios" / "README.md").read_text()
    m = re.search(r"^### Your own load shape$.*?^```js\n(.*?)^```$", text, re.S | re.M)
    assert m and m[1] == (ROOT / "scenarios" / "examples" / "rate-spike.js").read_text()

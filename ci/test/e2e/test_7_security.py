"""The security review's proofs on the local cluster with the real k6-operator v1.5.0: what
the ValidatingAdmissionPolicies deny the runner while scale and rollout pass, a hostile value refused
by `helm install` and an accepted one reaching the runner byte for byte, a remote-write password
by Secret reference that works and appears in no object, and an uninstall whose hook image cannot
be pulled. The module installs the release with its own values, a podkill run (the one scenario
granted pod deletes), and the last case removes it.
"""
import json
import secrets
import time

import pytest

from cluster_lib import wait_for

# An accepted extraEnv value with characters a shell would act on outside double quotes
# (k6-operator pastes it as -e NAME="value" into the initializer's sh -c line).
PROBE_NAME, PROBE_VALUE = "K6_E2E_PROBE", "a&b|id>c<d(e)f*g?h~i"
SECRET = "e2e-remote-write"


@pytest.fixture(scope="module")
def password():
    return f"pw-{secrets.token_hex(8)}"


@pytest.fixture(scope="module")
def secure_run(kube, testid, password):
    """A podkill run with the odd extraEnv value and the remote-write password from a Secret,
    followed to its end; (testid, TestRun name, the runner's environment as read from its process)."""
    ns = kube.namespace
    kube.kubectl("-n", ns, "delete", "secret", SECRET, "--ignore-not-found")
    kube.kubectl("-n", ns, "create", "secret", "generic", SECRET, f"--from-literal=password={password}")
    run_id = f"{testid}-security"
    kube.install(run_id, "--set", "loadtest.scenario=podkill", "--set", "loadtest.duration=20s",
                 "--set-string", f"loadtest.extraEnv.{PROBE_NAME}={PROBE_VALUE}",
                 "--set-string", "loadtest.extraEnv.K6_PROMETHEUS_RW_USERNAME=bench",
                 "--set", f"loadtest.extraEnv.K6_PROMETHEUS_RW_PASSWORD.valueFrom.secretKeyRef.name={SECRET}",
                 "--set", "loadtest.extraEnv.K6_PROMETHEUS_RW_PASSWORD.valueFrom.secretKeyRef.key=password")
    name = f"{kube.release}-loadtest"
    # the runner's k6 process, seen from the node (the local cluster runs here), while it runs
    pids = []

    def k6_running():
        pids[:] = kube.run(["pgrep", "-f", "--", f"--tag testrun_name={name}$"]).stdout.split()
        return bool(pids)
    wait_for(f"a k6 process of TestRun {name}", k6_running, 180)
    environ = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                for item in f.read().split(b"\0"):
                    if b"=" in item:
                        k, v = item.split(b"=", 1)
                        environ[k.decode()] = v.decode(errors="replace")
        except OSError:
            pass
    ev = kube.follow(kube.work / "runs" / run_id, 300, name, fresh=True)
    return run_id, name, environ, ev


def as_runner(kube, runner):
    return ("--as", f"system:serviceaccount:{kube.namespace}:{runner}")


def replace_as(kube, runner, deployment):
    """kubectl replace --dry-run=server of DEPLOYMENT (an object) as the runner: (rc, output)."""
    r = kube.kubectl("-n", kube.namespace, "replace", "--dry-run=server", "-f", "-", *as_runner(kube, runner),
                     input=json.dumps(deployment), check=False)
    return r.returncode, r.stdout + r.stderr


def runner_of(kube):
    """The runner's ServiceAccount as this module's release names it (the runner_sa fixture puts
    the benchmark's release back, which would undo this module's install)."""
    (testrun,) = [o for o in kube.hook_objects() if o["kind"] == "TestRun"]
    return testrun["spec"]["runner"]["serviceAccountName"]


def test_runner_may_scale_and_restart_the_backend_but_not_change_its_pod(kube, secure_run):
    """As the runner's ServiceAccount, server-side dry runs of the backend Deployment: replicas and
    the rollout-restart annotation pass; a new image, ServiceAccount or command is denied by the
    backend policy with its message (authorisation alone would let all of them through)."""
    runner_sa = runner_of(kube)
    backend = kube.kubectl_json("-n", kube.namespace, "get", "deployment", kube.backend_deployment())
    for k in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
        backend["metadata"].pop(k, None)
    backend.pop("status", None)

    def changed(edit):
        d = json.loads(json.dumps(backend))
        edit(d)
        return d
    spec = lambda d: d["spec"]["template"]["spec"]
    allowed = {
        "replicas 6": changed(lambda d: d["spec"].__setitem__("replicas", 6)),
        "rollout restart": changed(lambda d: d["spec"]["template"]["metadata"].setdefault("annotations", {})
                                   .__setitem__("kubectl.kubernetes.io/restartedAt", "2026-11-27T00:00:00Z")),
    }
    denied = {
        "image": changed(lambda d: spec(d)["containers"][0].__setitem__("image", "evil/image:1")),
        "serviceAccountName": changed(lambda d: spec(d).__setitem__("serviceAccountName", "default")),
        "command": changed(lambda d: spec(d)["containers"][0].__setitem__(
            "command", ["sh", "-c", "cat /var/run/secrets/kubernetes.io/serviceaccount/token"])),
    }
    problems = []
    for what, d in allowed.items():
        rc, out = replace_as(kube, runner_sa, d)
        if rc != 0:
            problems.append(f"{what}: refused: {out.strip()}")
    for what, d in denied.items():
        rc, out = replace_as(kube, runner_sa, d)
        if rc == 0 or "may not change the pod template of the backend's Deployment" not in out:
            problems.append(f"{what}: rc {rc}, not denied by the backend policy: {out.strip()}")
    assert problems == []


def test_podkill_may_delete_backend_pods_only(kube, secure_run):
    ns, runner_sa = kube.namespace, runner_of(kube)
    pods = kube.kubectl_json("-n", ns, "get", "pods")["items"]
    backend = [p["metadata"]["name"] for p in pods
               if (p["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == "backend"]
    others = [p["metadata"]["name"] for p in pods
              if (p["metadata"].get("labels") or {}).get("app.kubernetes.io/component") != "backend"]
    assert backend and others, f"want a backend pod and another pod in {ns}: {backend} {others}"
    allowed = kube.kubectl("-n", ns, "delete", "pod", backend[0], "--dry-run=server", *as_runner(kube, runner_sa),
                           check=False)
    assert allowed.returncode == 0, allowed.stderr
    denied = kube.kubectl("-n", ns, "delete", "pod", others[0], "--dry-run=server", *as_runner(kube, runner_sa),
                          check=False)
    assert denied.returncode != 0 and "may delete only backend pods" in denied.stderr, denied.stdout + denied.stderr


def test_podkill_run_churned_through_the_policies(kube, secure_run):
    """The run ended on its own, and no API call of it was denied (the policies let podkill work)."""
    run_id, name, environ, ev = secure_run
    assert ev.exits and all(c in (0, 99) for c in ev.exits.values()), ev.describe()
    assert "denied request" not in ev.log_text, ev.log_text[-2000:]
    kills = f'sum(k6_bench_scale_events_total{{testid="{run_id}", action="podkill"}})'
    wait_for(f"podkill events of {run_id} in Prometheus", lambda: (kube.prom_value(kills, None) or 0) > 0, 60)


def test_accepted_value_reaches_the_runner_byte_for_byte_and_runs_nothing(kube, secure_run):
    run_id, name, environ, ev = secure_run
    assert environ.get(PROBE_NAME) == PROBE_VALUE, f"{PROBE_NAME} in the runner: {environ.get(PROBE_NAME)!r}"
    # the initializer ran `sh -c ... -e K6_E2E_PROBE="a&b|id>c<d(e)f*g?h~i" ...`: had the quoting
    # broken, `id` would have printed the uid into its log and k6 archive would have failed
    init = kube.kubectl("-n", kube.namespace, "logs", f"job/{name}-initializer", check=False)
    assert init.returncode == 0, init.stderr
    assert "uid=" not in init.stdout, init.stdout[-2000:]


def test_hostile_value_refused_by_helm_and_nothing_changes(kube, secure_run, testid):
    before = json.loads(kube.helm("history", kube.release, "-n", kube.namespace, "-o", "json").stdout)
    r = kube.install(f"{testid}-hostile", "--set-string", "loadtest.path=/$(id>&2)", check=False)
    after = json.loads(kube.helm("history", kube.release, "-n", kube.namespace, "-o", "json").stdout)
    assert r.returncode != 0, "helm accepted loadtest.path=/$(id>&2)"
    assert "loadtest.path" in r.stderr, r.stderr[-2000:]
    assert len(after) == len(before), "a revision was recorded for the refused value"


def test_secret_referenced_password_works_and_appears_in_no_object(kube, secure_run, password):
    run_id, name, environ, ev = secure_run
    assert environ.get("K6_PROMETHEUS_RW_PASSWORD") == password, "the runner did not get the Secret's password"
    # remote write worked with it (the e2e Prometheus takes any credentials)
    def written():
        return (kube.prom_value(f'sum(k6_http_reqs_total{{testid="{run_id}"}})', None) or 0) > 0
    wait_for(f"k6_http_reqs_total of {run_id} in Prometheus", written, 60)
    ns = kube.namespace
    places = {
        "namespaced objects": kube.kubectl("-n", ns, "get", "testruns.k6.io,jobs,pods,configmaps,services,events",
                                           "-o", "yaml").stdout,
        "helm release": kube.helm("get", "all", kube.release, "-n", ns).stdout,
        "k6-operator log": kube.kubectl("-n", "k6-operator-system", "logs", "deployment/k6-operator-controller-manager",
                                        "--tail=-1", check=False).stdout,
        "initializer log": kube.kubectl("-n", ns, "logs", f"job/{name}-initializer", check=False).stdout,
    }
    assert places["helm release"], "helm get all printed nothing"
    assert [where for where, text in places.items() if password in text] == []


def test_uninstall_with_an_unpullable_hook_image_fails_in_time_with_the_way_out(kube, secure_run, testid):
    """The hook image is never pulled (pull policy Never, an image that was never built): the
    uninstall fails within the hook Job's deadline (60 + waitSeconds 10 + 30 s) naming the Job's
    failure, the release stays; NOTES' way out (--no-hooks, then the deletes it prints) leaves
    no TestRun, Job or pod of the release."""
    ns, rel = kube.namespace, kube.release
    kube.install(f"{testid}-no-hook-image", "--set", "loadtest.cleanupHook.image.repository=bench/never-built",
                 "--set", "loadtest.cleanupHook.image.tag=none", "--set", "loadtest.cleanupHook.waitSeconds=10",
                 "--set", "loadtest.duration=10s")
    notes = kube.helm("get", "notes", rel, "-n", ns).stdout
    assert f"helm uninstall {rel} -n {ns} --no-hooks" in notes, notes
    start = time.monotonic()
    r = kube.helm("uninstall", rel, "-n", ns, "--timeout", "5m", check=False)
    took = time.monotonic() - start
    assert r.returncode != 0, "uninstall succeeded although the hook image cannot be pulled"
    assert "DeadlineExceeded" in r.stderr or "deadline" in r.stderr.lower(), r.stderr
    assert took < 100 + 45, f"the uninstall took {took:.0f} s, beyond the hook's 100 s deadline"
    assert kube.helm("status", rel, "-n", ns, check=False).returncode == 0, "the release is gone although the hook failed"
    # the way out, as NOTES prints it
    kube.helm("uninstall", rel, "-n", ns, "--no-hooks", "--wait", "--timeout", "3m")
    kube.kubectl("-n", ns, "delete", "testrun", f"{rel}-loadtest", "--ignore-not-found", "--wait=true")
    kube.kubectl("-n", ns, "delete", "job,pod,serviceaccount,role,rolebinding,configmap", "-l",
                 f"app.kubernetes.io/instance={rel}", "--wait=true")
    kube.kubectl("-n", ns, "delete", "secret", SECRET, "--ignore-not-found")

    def nothing_left():
        return all(not kube.kubectl("-n", ns, "get", kind, "-o", "name").stdout.split()
                   for kind in ("testruns.k6.io", "jobs", "pods"))
    try:
        wait_for("no TestRun, Job or pod left in the namespace", nothing_left, 120)
    except AssertionError as e:
        pytest.fail(f"{e}\n{kube.kubectl('-n', ns, 'get', 'testruns.k6.io,jobs,pods', check=False).stdout}")

"""Failure paths, each a copy of the release's TestRun with a short duration and its own testid: a
churning runner killed mid-run, Prometheus down, the runner's Role removed."""
import json
import os
import signal
import urllib.request

from cluster_lib import start_testrun_copy, wait_for

# k6's exit codes: 0 all thresholds passed, 99 a threshold failed, 107 the script threw (setup),
# 110 marked as failed (bench's end-of-run record did not reach Prometheus).
K6_OK, K6_THRESHOLDS_FAILED, K6_SCRIPT_EXCEPTION, K6_MARKED_AS_FAILED = 0, 99, 107, 110
# A run that ended on its own, whatever its thresholds said: used where the case judges something
# else than the latency of a few seconds of load on a busy machine (both were seen here).
ENDED_ON_ITS_OWN = (K6_OK, K6_THRESHOLDS_FAILED)


def backend_state(kube):
    """(spec.replicas, the replicas in the restore record or None) of the backend Deployment."""
    d = kube.kubectl_json("-n", kube.namespace, "get", "deployment", kube.backend_deployment())
    record = (d["metadata"].get("annotations") or {}).get("bench/churn-restore")
    return d["spec"]["replicas"], (json.loads(record)["replicas"] if record else None)


def test_killed_runner_backend_restored_by_the_next_run(kube, main_run, main_release):
    """A run churns the backend to 7; its k6 process is killed with SIGKILL from the node, as the OOM
    killer or a lost node would (a pod deletion sends SIGTERM first, and k6 would still run
    teardown). The runner Job has backoffLimit 0: no second pod. The backend stays at 7 with the
    record of its start; the next run's setup restores it and says so."""
    start, _ = backend_state(kube)
    name = start_testrun_copy(kube, main_run.testid, "killed", "120s")
    try:
        wait_for("backend at 7 replicas with a restore record",
                 lambda: (lambda s: s[0] == 7 and s[1] is not None)(backend_state(kube)), 240)
        # the runner's processes (sh -c and k6) seen from the node, where the local cluster runs;
        # their command line ends with this TestRun's unique name (k6-operator's --tag testrun_name)
        pids = kube.run(["pgrep", "-f", "--", f"--tag testrun_name={name}$"]).stdout.split()
        assert pids, f"no k6 process of TestRun {name} on this node"
        for pid in pids:
            os.kill(int(pid), signal.SIGKILL)
    finally:
        kube.delete_testruns(name)
    problems = []
    after_kill = backend_state(kube)
    if after_kill != (7, start):
        problems.append(f"after the kill: replicas and record {after_kill}, want (7, {start})")
    name = start_testrun_copy(kube, main_run.testid, "after-kill", "10s")
    try:
        ev = kube.follow(kube.work / "runs" / f"{main_run.testid}-after-kill", 300, name)
    finally:
        kube.delete_testruns(name)
    if not ev.exits or any(c not in ENDED_ON_ITS_OWN for c in ev.exits.values()):
        problems.append(f"the next run did not end on its own: {ev.describe()}")
    if "setup (left by an earlier run): restored Deployment" not in ev.log_text:
        problems.append("the next run's log does not say it restored the backend")
    after_next = backend_state(kube)
    if after_next != (start, None):
        problems.append(f"after the next run: replicas and record {after_next}, want ({start}, None)")
    assert problems == []


def prometheus_answers(url):
    try:
        with urllib.request.urlopen(f"{url}/-/ready", timeout=2):
            return True
    except OSError:
        return False


def test_prometheus_down_summary_still_printed(kube, main_run, main_release):
    mon = ("-n", "bench-monitoring")
    kube.kubectl(*mon, "scale", "deployment", "prometheus", "--replicas=0")
    try:
        kube.kubectl(*mon, "wait", "--for=delete", "pod", "-l", "app.kubernetes.io/name=prometheus",
                     "--timeout=60s", check=False)
        assert not prometheus_answers(kube.prom_url), "Prometheus still answers after scaling it to 0"
        name = start_testrun_copy(kube, main_run.testid, "promdown", "15s")
        try:
            ev = kube.follow(kube.work / "runs" / f"{main_run.testid}-promdown", 300, name)
        finally:
            kube.delete_testruns(name)
    finally:
        kube.kubectl(*mon, "scale", "deployment", "prometheus", "--replicas=1")
        kube.kubectl(*mon, "rollout", "status", "deployment/prometheus", "--timeout=180s")
    # its end-of-run record cannot arrive: the runner fails after its summary (99 if a threshold did)
    assert ev.exits and all(c in (K6_MARKED_AS_FAILED, K6_THRESHOLDS_FAILED) for c in ev.exits.values()), ev.describe()
    assert ev.summary is not None, f"no summary JSON in the runner log with Prometheus down ({ev.describe()})"
    assert ev.summary["requests"]["total"] > 0, ev.summary["requests"]
    assert ev.summary["end_record"]["delivered"] is False, ev.summary["end_record"]


def test_role_removed_run_fails_with_a_clear_message(kube, main_run, runner_sa):
    """With the chart's loadtest Role removed, the run fails in setup (k6 exit 107) and the
    scenario's own message (lib/kube.js describeApiError) names what the runner needs."""
    bindings = kube.kubectl_json("-n", kube.namespace, "get", "rolebindings")["items"]
    roles = [b["roleRef"]["name"] for b in bindings
             if any(s.get("kind") == "ServiceAccount" and s.get("name") == runner_sa for s in b.get("subjects") or [])]
    assert roles, f"no RoleBinding binds the runner SA {runner_sa}"
    kube.kubectl("-n", kube.namespace, "delete", "role", roles[0])
    name = start_testrun_copy(kube, main_run.testid, "forbidden", "20s")
    try:
        ev = kube.follow(kube.work / "runs" / f"{main_run.testid}-forbidden", 300, name)
    finally:
        kube.delete_testruns(name)
    assert ev.exits and all(c == K6_SCRIPT_EXCEPTION for c in ev.exits.values()), ev.describe()
    assert "forbidden" in ev.log_text.lower(), ev.log_text[-2000:]
    assert "The runner needs get and update on Deployment" in ev.log_text, ev.log_text[-2000:]

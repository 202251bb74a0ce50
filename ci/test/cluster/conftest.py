"""Fixtures of the local cluster's smoke test (ci/cluster): its settings, kubectl, a clean start and
a guaranteed `down`.

The tests run in file order, as the cluster's life goes: test_1_refused_up.py (clear errors for bad
input, nothing left behind), test_2_up.py (`up`, again idempotent, node and DNS ready),
test_3_backend.py (the backend image serving through a ClusterIP Service and a 127.0.0.1 NodePort,
scaling 2 -> 4 reaching the EndpointSlice and all 4 pods, cluster DNS and the API from a pod),
test_4_down.py (`down` leaving nothing behind). The part ends with the cluster down (the e2e part
brings it up again, warm); a run stopped early still brings it down at teardown.

There is one cluster on this machine: run this part under `flock /tmp/bench-cluster.lock`.
"""
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CACHE = Path(os.environ.get("BENCH_CACHE", Path.home() / ".cache" / "bench"))
NS = "bench-smoke"
APP = "smoke-backend"
# ci/cluster/config.sh's settings the tests use (env overrides of its ports and folders honoured).
SETTINGS = ["BENCH_K8S_VERSION", "BENCH_NODE_NAME", "BENCH_CLUSTER_DIR", "BENCH_KUBECONFIG", "BENCH_CONTAINERD_SOCK",
            "BENCH_API_SERVICE_IP", "BENCH_CLUSTER_DOMAIN"]


def run(cmd, **kwargs):
    """cmd (an argument list), output captured as text; never raises on a non-zero exit."""
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)


def output_of(result):
    return (result.stdout + result.stderr).strip()


def must(cmd, what, **kwargs):
    result = run(cmd, **kwargs)
    if result.returncode != 0:
        pytest.fail(f"{what} failed (exit {result.returncode}):\n{output_of(result)[-4000:]}")
    return result


def script(name):
    return ["bash", ROOT / "ci" / "cluster" / f"{name}.sh"]


def cluster_settings():
    out = run(["bash", "-c", '. "$1/ci/cluster/config.sh"; shift; for v; do printf "%s=%s\\n" "$v" "${!v}"; done',
               "_", ROOT, *SETTINGS])
    assert out.returncode == 0, out.stderr
    return dict(line.split("=", 1) for line in out.stdout.splitlines())


CONFIG = cluster_settings()


def leftovers():
    """ci/cluster/lib.sh's list of what the cluster left (processes, mounts, chains, bridge, veths,
    cgroups, folders, netns, host files), one per line; empty when clean."""
    # errexit off, as lib.sh's callers run it: its greps that find nothing are not errors.
    result = run(["bash", "-c", '. "$1/ci/cluster/lib.sh" && set +e && leftovers', "_", ROOT])
    assert result.returncode == 0, f"listing leftovers failed:\n{output_of(result)}"
    return result.stdout.splitlines()


def kubectl(*args, **kwargs):
    return run([CACHE / "bin" / "kubectl", "--kubeconfig", CONFIG["BENCH_KUBECONFIG"], *args], **kwargs)


def kubectl_json(*args):
    result = kubectl(*args, "-o", "json")
    assert result.returncode == 0, output_of(result)
    return json.loads(result.stdout)


def wait_until(seconds, predicate, interval=0.5):
    """predicate() every `interval` s until it is true; its last value after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def node_is_ready():
    result = kubectl("get", "node", CONFIG["BENCH_NODE_NAME"], "-o", "json")
    if result.returncode != 0:
        return False
    conditions = json.loads(result.stdout)["status"].get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


class Cluster:
    """The timings of up/down and whether `down` already ran (so teardown need not)."""

    def __init__(self):
        self.timings = {}
        self.down_done = False

    def timed(self, what, cmd):
        t0 = time.monotonic()
        result = run(cmd)
        self.timings[what] = round(time.monotonic() - t0, 1)
        return result


def dump_diagnostics():
    print("diagnostics:")
    for args in (["get", "nodes,pods", "-A", "-o", "wide"], ["-n", NS, "describe", "pods"]):
        print(output_of(kubectl(*args)))
    for log in sorted(Path(CONFIG["BENCH_CLUSTER_DIR"], "logs").glob("*.log")):
        lines = log.read_text(errors="replace").splitlines()[-15:]
        print(f"--- {log}\n" + "\n".join(lines))


@pytest.fixture(scope="session")
def cluster(request):
    """The cluster built (ci/cluster/build.sh, a stamp check when warm) and down, so the refused-start
    checks and the `up` are real; at the end, down again unless test_4_down.py did it."""
    if os.geteuid() != 0:
        pytest.fail("the cluster part needs root (it starts containerd, kubelet and changes iptables)")
    must(["bash", ROOT / "ci" / "cluster" / "build.sh"], "ci/cluster/build.sh")
    must(script("down"), "ci/cluster/down.sh (the clean start)")
    state = Cluster()
    yield state
    if not state.down_done and Path(CONFIG["BENCH_CLUSTER_DIR"]).exists():
        if request.session.testsfailed:
            dump_diagnostics()
        must(script("down"), "ci/cluster/down.sh at teardown")
    # Shown whatever the outcome (pytest shows a fixture's captured print only on failure).
    with request.config.pluginmanager.get_plugin("capturemanager").global_and_fixture_disabled():
        print(f"\ncluster timings (s): {state.timings}")


@pytest.fixture(scope="session")
def ready_node(cluster):
    """A Ready node, or the backend checks are skipped, said and counted (the failed "node is Ready"
    check of test_2_up.py already fails the part)."""
    if not node_is_ready():
        pytest.skip(f"node {CONFIG['BENCH_NODE_NAME']} is not Ready")
    return CONFIG["BENCH_NODE_NAME"]

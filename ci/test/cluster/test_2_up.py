"""`up` brings the node to Ready; again, it says it is already up; DNS is available; the kubectl that
ci/cluster/env.sh puts on PATH is the one built here."""
import json
import os
from pathlib import Path

from conftest import CACHE, CONFIG, ROOT, kubectl, node_is_ready, output_of, run, script


def test_up_brings_the_node_to_ready(cluster):
    result = cluster.timed("up", script("up"))
    assert result.returncode == 0, output_of(result)[-4000:]


def test_up_again_is_idempotent(cluster):
    result = cluster.timed("up again", script("up"))
    assert result.returncode == 0 and "already up" in output_of(result), output_of(result)[-4000:]


def test_node_is_ready(cluster):
    assert node_is_ready(), output_of(kubectl("get", "node", CONFIG["BENCH_NODE_NAME"], "-o", "yaml"))


def test_coredns_is_available(cluster):
    result = kubectl("-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=60s")
    assert result.returncode == 0, output_of(result)


def test_kubectl_is_the_one_built_here(cluster):
    found = run(["bash", "-c", '. "$1/ci/cluster/env.sh" && command -v kubectl', "_", ROOT])
    assert found.returncode == 0, output_of(found)
    path = found.stdout.strip()
    assert os.path.realpath(path) == str((CACHE / "bin" / "kubectl").resolve()), path
    version = run([path, "version", "--client", "-o", "json"])
    assert version.returncode == 0, output_of(version)
    assert json.loads(version.stdout)["clientVersion"]["gitVersion"] == CONFIG["BENCH_K8S_VERSION"], version.stdout

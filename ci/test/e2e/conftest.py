"""Fixtures of the e2e part: the local cluster, the real dynamic benchmark on it and each later
run's evidence, collected once.

- `cluster` (session): ci/cluster/build.sh and up.sh; at teardown ci/cluster/down.sh unless
  BENCH_E2E_KEEP_CLUSTER=1.
- `benchmark` (session): ci/e2e/run.sh --keep (tools, images, the stand-ins of the subcharts,
  the chart from its offline copy, the TestRun followed to its end; the release stays installed
  for the cases that follow, test_6_uninstall.py removes it).
- `kube`: kubectl, helm and Prometheus of that cluster (ci/e2e/step.sh env).
- `main_run`: the benchmark's evidence (stages, runner logs and exit codes, replica watch,
  summary) and run.json (start, the instant Prometheus is read at, Traefik's TLS counter before).
- `matrix` (test_4_matrix.py), `gateway_run` and `propagation_run` (test_5_gateway.py): the later
  runs, each run once by the first case that needs it.

Cases run in file order (test_1 ... test_6): some change the release (Role removed, Prometheus
stopped, helm upgrades, uninstall) the way the old bash checks did, in the same order.
"""
import json
import os
import subprocess
import time
from dataclasses import dataclass

import pytest

from cluster_lib import ROOT, Cluster, RunEvidence, run


def _script(*args):
    """A harness script, its output shown by pytest on failure; raises when it fails."""
    subprocess.run(["bash", *map(str, args)], check=True)


@pytest.fixture(scope="session")
def cluster():
    _script(ROOT / "ci" / "cluster" / "build.sh")
    _script(ROOT / "ci" / "cluster" / "up.sh")
    yield
    if os.environ.get("BENCH_E2E_KEEP_CLUSTER", "0") != "1":
        _script(ROOT / "ci" / "cluster" / "down.sh")


@pytest.fixture(scope="session")
def testid():
    return os.environ.get("BENCH_E2E_TESTID") or time.strftime("e2e-%Y%m%d-%H%M%S", time.gmtime())


@pytest.fixture(scope="session")
def benchmark(cluster, testid):
    """ci/e2e/run.sh --keep for this testid; its exit status is the harness' own (a TestRun that
    never finishes, no Prometheus data): the cases judge the run itself."""
    result = subprocess.run(["bash", ROOT / "ci" / "e2e" / "run.sh", "--keep"],
                            env=dict(os.environ, BENCH_E2E_TESTID=testid))
    assert result.returncode == 0, f"ci/e2e/run.sh --keep exited {result.returncode} (its log above)"


@pytest.fixture(scope="session")
def kube(benchmark):
    out = run(["bash", ROOT / "ci" / "e2e" / "step.sh", "env"], check=True).stdout
    return Cluster(json.loads(out))


@dataclass
class MainRun:
    testid: str
    evidence: RunEvidence
    facts: dict          # run.json: testid, testrun, start, prom_time, traefik_tls_before

    @property
    def summary(self):
        assert self.evidence.summary is not None, f"no summary JSON in the runner log ({self.evidence.describe()})"
        return self.evidence.summary

    @property
    def path(self):
        return self.evidence.path


@pytest.fixture(scope="session")
def main_run(kube, testid):
    path = kube.work / "runs" / testid
    facts = json.loads((path / "run.json").read_text())
    return MainRun(testid, RunEvidence.read(path), facts)


@pytest.fixture(scope="session")
def runner_sa(kube, main_run):
    """The runner's ServiceAccount, as the release's TestRun names it."""
    for obj in kube.hook_objects():
        if obj["kind"] == "TestRun":
            name = obj["spec"].get("runner", {}).get("serviceAccountName")
            assert name, "the release's TestRun has no spec.runner.serviceAccountName"
            return name
    pytest.fail("no TestRun among the release's hooks")

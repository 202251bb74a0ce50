"""Fixtures of the e2e part: the local cluster, the real dynamic benchmark on it and each later
run's evidence, collected once; every module states what it needs through them, so a module runs
alone (pytest ci/test/e2e/test_2_rights.py) and in any order.

- `cluster` (session): ci/cluster/build.sh and up.sh; at teardown ci/cluster/down.sh unless
  BENCH_E2E_KEEP_CLUSTER=1.
- `benchmark` (session): the harness' run (ci/e2e/e2eharness/demo.py, what `make demo` runs):
  tools, images, the stand-ins of the subcharts, the chart from its offline copy, the TestRun
  followed to its end; the release stays installed.
- `kube`: kubectl, helm, Prometheus and Traefik of that cluster for the release `bench`.
- `main_run`: the benchmark's evidence (stages, runner logs and exit codes, replica watch,
  summary) and run.json (start, the instant Prometheus is read at, Traefik's TLS counter before).
- `main_release`: the release as the benchmark installed it (its values, every object of its
  manifest): put back without hooks (no new TestRun) when a case before changed it (a matrix
  variant, a Gateway run, a Role deleted, an uninstall). Cases that read or copy the release use it.
- `matrix` (test_4_matrix.py), `gateway_run` and `propagation_run` (test_5_gateway.py),
  `secure_run` (test_7_security.py): the later runs, each run once by the first case that needs it;
  each installs the values it needs itself.
"""
import json
import os
import subprocess
import time
from dataclasses import dataclass

import pytest

from cluster_lib import ROOT, Cluster, RunEvidence
from e2eharness import demo, stack
from e2eharness.kube import Kube
from e2eharness.settings import Settings


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
    """The harness' run for this testid, the release kept; it raises on the harness' own failures (a
    TestRun that never finishes, no Prometheus data): the cases judge the run itself."""
    demo.main(keep=True, testid=testid)


@pytest.fixture(scope="session")
def kube(benchmark):
    settings = Settings.read()
    return Cluster(settings, stack.prometheus_url(Kube(settings)))


@dataclass
class MainRun:
    testid: str
    evidence: RunEvidence
    facts: dict          # run.json: testid, testrun, start, prom_time, traefik_tls_before, values

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


def _release_drifted(kube, values):
    """Why the release differs from the benchmark's install ("" when it does not)."""
    got = kube.helm("get", "values", kube.release, "-n", kube.namespace, "-o", "json", check=False)
    if got.returncode != 0:
        return "not installed"
    if json.loads(got.stdout or "{}") != values:
        return "other values"
    manifest = kube.helm("get", "manifest", kube.release, "-n", kube.namespace).stdout
    missing = kube.kubectl("get", "-f", "-", "-o", "name", input=manifest, check=False)
    return "objects missing" if missing.returncode != 0 else ""


@pytest.fixture
def main_release(kube, main_run):
    """The release as the benchmark installed it, put back (helm upgrade --install --no-hooks: no
    new TestRun) if a case before changed it."""
    values = main_run.facts["values"]
    why = _release_drifted(kube, values)
    if why:
        print(f"main_release: {why}; installing the benchmark's values again (no hooks)")
        kube.install(main_run.testid, "--no-hooks")
        assert _release_drifted(kube, values) == "", "the release still differs after installing it again"
    return kube


@pytest.fixture
def runner_sa(main_release):
    """The runner's ServiceAccount, as the release's TestRun names it."""
    for obj in main_release.hook_objects():
        if obj["kind"] == "TestRun":
            name = obj["spec"].get("runner", {}).get("serviceAccountName")
            assert name, "the release's TestRun has no spec.runner.serviceAccountName"
            return name
    pytest.fail("no TestRun among the release's hooks")

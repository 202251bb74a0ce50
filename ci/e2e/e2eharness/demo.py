"""The run behind `make demo` and the e2e test part: this machine from nothing to a real dynamic
benchmark (the cluster and images built, the stand-ins of the subcharts deployed, the chart
installed, its TestRun followed to the end), its evidence kept in <work>/runs/<testid>/ with run.json
(what the checks of ci/test/e2e read beside it), and its results printed."""
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field

from benchreport.prometheus import Prometheus, text_sum

from . import chart, stack
from .kube import Kube
from .settings import ROOT
from .testrun import ReplicaWatch, follow_evidence, summary_tables, testrun_name

TIMEOUT_S = 600


@dataclass
class Phases:
    """How long each phase took (the README's cold and warm breakdown), logged as it ends."""
    t0: float = field(default_factory=lambda: float(os.environ.get("E2E_T0") or time.time()))
    done: list = field(default_factory=list)

    def __call__(self, name, fn, *args):
        start = time.monotonic()
        result = fn(*args)
        self.done.append(f"{name}={time.monotonic() - start:.0f}s")
        print(f"phase {name}: {time.monotonic() - start:.0f} s", flush=True)
        return result


def tool(*args):
    """One of the project's build tools (ci/tools, ci/cluster, ci/images), its output shown."""
    subprocess.run(["bash", *map(str, args)], check=True)


def bring_up(kube, phases):
    """helm, the cluster, the images and the stack; returns the Prometheus URL."""
    phases("tools", tool, ROOT / "ci/tools/install.sh", "helm")
    phases("cluster", lambda: (tool(ROOT / "ci/cluster/build.sh"), tool(ROOT / "ci/cluster/up.sh")))
    phases("images", tool, ROOT / "ci/images/build.sh")
    return phases("stack", stack.deploy, kube)


def benchmark(kube, testid, prom_url, phases):
    """Installs the chart for TESTID, follows its TestRun to the end and keeps the evidence; returns
    (the evidence folder, the evidence)."""
    directory = kube.work / "runs" / testid
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    # a TestRun of an interrupted earlier run must not be followed
    kube.kubectl("-n", kube.namespace, "delete", "testruns.k6.io", "--all", "--wait=true")
    start = time.time()
    # Traefik's TLS request counter before the run (it counts every run since Traefik started)
    tls_before = text_sum(stack.traefik_metrics(kube), "traefik_entrypoint_requests_tls_total", ["entrypoint=websecure"])
    phases("install-chart", chart.install, kube, testid)
    # what the release was installed with: the e2e cases put it back when one changed it
    values = json.loads(kube.helm("get", "values", kube.release, "-n", kube.namespace, "-o", "json").stdout or "{}")
    watch = ReplicaWatch(kube, directory / "replicas.watch")
    try:
        name = testrun_name(kube)
        print(f"following TestRun {kube.namespace}/{name} (testid {testid})", flush=True)
        evidence = phases("testrun", follow_evidence, kube, directory, int(os.environ.get("BENCH_E2E_TIMEOUT", TIMEOUT_S)),
                          name, False)
    finally:
        watch.stop()
    # k6 pushes its last samples when the runner ends: queries are evaluated once they landed
    prom_time = Prometheus(prom_url).settled(testid)
    if not evidence.logs:
        raise RuntimeError(f"no runner log captured for TestRun {name} (stages: {' '.join(evidence.stages)})")
    (directory / "run.json").write_text(json.dumps({
        "testid": testid, "testrun": name, "prometheus": prom_url, "start": start, "prom_time": prom_time,
        "traefik_tls_before": tls_before, "values": values}))
    return directory, evidence


def print_results(kube, testid, directory, evidence, prom_url, phases):
    print(f"\n=== bench summary (testid {testid}, stages: {' '.join(evidence.stages)})")
    print(summary_tables(evidence.log_text))
    print(f"\nResults:    {directory / 'summary.json'}")
    print(f"Runner log: {', '.join(str(directory / f'{pod}.log') for pod in evidence.logs)}")
    print(f'Prometheus: {prom_url} (query e.g. sum(k6_http_reqs_total{{testid="{testid}"}}))')
    print(f"Dashboards: {ROOT}/dashboards/*.json (shipped as ConfigMaps by the chart: "
          f"kubectl -n {kube.namespace} get configmaps -l grafana_dashboard)")
    print(f"Phases:     {' '.join(phases.done)}")
    span = Prometheus(prom_url).locate_run(testid, 3600)
    if span:
        print(f"First request: {span[0] - phases.t0:.0f} s after start (first k6 sample in Prometheus, 5 s resolution)")
    r = (evidence.summary or {}).get("requests")
    if r:
        print(f"Rate held:  {r['rate_achieved']} of {r['rate_target']} req/s, {r['dropped_iterations']} dropped "
              f"iterations, {r['total']} requests")


def main(keep, testid=None):
    """The whole run; with keep the release stays installed (the demo and the e2e part)."""
    if os.geteuid() != 0:
        raise RuntimeError("the e2e run needs root (it starts containerd, kubelet and changes iptables); run it as root")
    phases = Phases()
    kube = Kube()
    kube.work.mkdir(parents=True, exist_ok=True)
    if not kube.settings.values.is_file():
        raise RuntimeError(f"values file {kube.settings.values} not found (BENCH_E2E_VALUES)")
    testid = testid or os.environ.get("BENCH_E2E_TESTID") or time.strftime("e2e-%Y%m%d-%H%M%S")
    prom_url = bring_up(kube, phases)
    directory, evidence = benchmark(kube, testid, prom_url, phases)
    print_results(kube, testid, directory, evidence, prom_url, phases)
    if not keep:
        kube.helm("uninstall", kube.release, "-n", kube.namespace, "--wait")
    print(f"total {time.time() - phases.t0:.0f} s: {' '.join(phases.done)}", flush=True)

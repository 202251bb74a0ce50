"""What the e2e fixtures and cases share: the harness (ci/e2e/e2eharness: the cluster's tools as
argument lists, the chart's install, a TestRun followed and its evidence) with the cases' own
questions on top, and the project's one Prometheus client (dashboards/report/benchreport)."""
import json
import sys

from benchreport.prometheus import Prometheus, text_sum  # the harness' one client (pytest.ini's pythonpath)
from e2eharness import chart, stack
from e2eharness.kube import Kube, run
from e2eharness.kube import wait_for as _wait_for
from e2eharness.settings import ROOT
from e2eharness.testrun import RunEvidence, follow_evidence, summaries_from_prefixed_log, summary_from_log
from harness import pythonpath

CONTRACT = json.loads((ROOT / "scenarios" / "contract.json").read_text())
__all__ = ["ROOT", "CONTRACT", "Cluster", "RunEvidence", "run", "summaries_from_prefixed_log", "summary_from_log",
           "text_sum", "wait_for", "json_stream", "start_testrun_copy"]


def wait_for(what, probe, timeout_s, interval_s=1.0):
    """The harness' wait_for, a timeout failing the case (AssertionError)."""
    try:
        return _wait_for(what, probe, timeout_s, interval_s)
    except TimeoutError as e:
        raise AssertionError(str(e)) from None


def start_testrun_copy(kube, testid, suffix, duration):
    """Creates a copy of the release's TestRun named <name>-SUFFIX for testid TESTID-SUFFIX, lasting
    DURATION, without helm's hook annotations and without cleanup (its pods stay to be read)."""
    new = f"{testid}-{suffix}"
    testruns = [o for o in kube.hook_objects() if o["kind"] == "TestRun"]
    assert testruns, "no TestRun among the release's hooks"
    tr = testruns[0]
    meta = tr["metadata"]
    meta["name"] = f"{meta['name']}-{suffix}"
    meta["annotations"] = {k: v for k, v in (meta.get("annotations") or {}).items() if not k.startswith("helm.sh/")}
    tr["spec"].pop("cleanup", None)
    tr["spec"]["arguments"] = (tr["spec"].get("arguments") or "").replace(f"testid={testid}", f"testid={new}")
    for e in tr["spec"].get("runner", {}).get("env", []):
        if e["name"] == "BENCH_DURATION":
            e["value"] = duration
        elif e["name"] == "BENCH_TESTID":
            e["value"] = new
    kube.delete_testruns(meta["name"])
    kube.kubectl("-n", kube.namespace, "create", "-f", "-", input=json.dumps(tr))
    return meta["name"]


class Cluster(Kube):
    """The local cluster for one release: kubectl, helm, the e2e Prometheus and Traefik."""

    def __init__(self, settings, prom_url):
        super().__init__(settings)
        # PYTHONPATH: the checkout's packages for the checkers it starts (ci/tools/dashboards/check.py)
        self.env = pythonpath.env(self.env)
        self.prom_url = prom_url
        self.prom = Prometheus(prom_url)
        self.info = {"report_python": sys.executable, "traefik_metrics_port": stack.traefik_metrics_port()}

    def for_release(self, release, namespace):
        from dataclasses import replace
        return Cluster(replace(self.settings, release=release, namespace=namespace), self.prom_url)

    def install(self, testid, *helm_args, check=True):
        result = chart.install(self, testid, *helm_args, check=False)
        if check:
            assert result.returncode == 0, f"helm upgrade --install exited {result.returncode}:\n{result.stderr[-3000:]}"
        return result

    def follow(self, directory, timeout_s, name=None, fresh=True):
        """Follows a TestRun (the release's, or NAME) to its end; its evidence in DIRECTORY (emptied
        first unless not fresh)."""
        try:
            return follow_evidence(self, directory, timeout_s, name, fresh)
        except TimeoutError as e:
            raise AssertionError(str(e)) from None

    def delete_testruns(self, name=None):
        self.kubectl("-n", self.namespace, "delete", "testruns.k6.io", *([name] if name else ["--all"]),
                     "--ignore-not-found", "--wait=true")

    def backend_deployment(self):
        names = self.backend_deployments()
        return names[0].split("/", 1)[1] if names else ""

    def traefik_metrics(self):
        return stack.traefik_metrics(self)

    def traefik_sum(self, name, *matchers):
        return text_sum(self.traefik_metrics(), name, matchers)

    def prom_value(self, query, at):
        """The first sample's value of an instant query at `at`, as a float (None: no data)."""
        v = self.prom.value(query, at)
        return None if v is None else float(v)

    def can_i(self, *args, as_user):
        """kubectl auth can-i's printed answer (it exits 1 when the answer is "no")."""
        return self.kubectl("auth", "can-i", *args, "--as", as_user, check=False).stdout.strip()

    def hook_objects(self):
        """The release's hooks (the TestRun among them) as objects."""
        return self.as_objects(self.helm("get", "hooks", self.release, "-n", self.namespace).stdout)

    def as_objects(self, manifests):
        """MANIFESTS (YAML documents) as objects, through kubectl's own reading of them."""
        out = self.kubectl("create", "--dry-run=client", "-o", "json", "-f", "-", input=manifests).stdout
        return [o for doc in json_stream(out) for o in (doc["items"] if doc.get("kind") == "List" else [doc])]


def json_stream(text):
    """The JSON values of TEXT, one after the other (kubectl -o json prints one per object)."""
    decoder, pos, out = json.JSONDecoder(), 0, []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            return out
        value, pos = decoder.raw_decode(text, pos)
        out.append(value)


def runner_starved(summary):
    """The runner's own summary blames the runner for its dropped iterations (CPU- or runtime-bound):
    on 2 shared cores a runner starved for seconds drops iterations whatever the controller does, and
    bench then rightly fails the run (99). A test of something else than that latency accepts it."""
    s = summary or {}
    runner = s.get("runner") or {}
    return (s.get("requests") or {}).get("dropped_because") == "runner" and bool(runner.get("cpu_bound") or runner.get("runtime_bound"))

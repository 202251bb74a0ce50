"""What the e2e fixtures and cases share: the cluster's tools as argument lists, the evidence of a
run read with json, and the project's one Prometheus client (dashboards/report/benchreport).

The orchestration that stays in bash (ci/e2e/run.sh, ci/e2e/step.sh: install the chart, follow a
TestRun while capturing its runner logs and exit codes) writes files; everything here reads them.
"""
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = json.loads((ROOT / "scenarios" / "contract.json").read_text())
from benchreport.prometheus import Prometheus, text_sum  # the harness' one client (pytest.ini's pythonpath)
from harness import pythonpath

# The lines scenarios/lib/summary-writer.js prints the bench.summary/v1 JSON between.
SUMMARY_BEGIN, SUMMARY_END = "BENCH_SUMMARY_JSON_BEGIN", "BENCH_SUMMARY_JSON_END"
# `kubectl logs --prefix` (the matrix runner's runners.log): "[pod/NAME/CONTAINER] line".
PREFIXED = re.compile(r"^\[[^\]]*\] (.*)$")


def run(cmd, check=False, **kwargs):
    """cmd as an argument list, output captured as text; with check, a failure raises with it."""
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} exited {result.returncode}:\n"
                             f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def summary_from_log(text):
    """The bench.summary/v1 object printed between the markers, or None. A pod log interleaves k6's
    stderr (e.g. remote-write errors) with stdout: only the JSON line between them is read."""
    lines = text.splitlines()
    try:
        begin = lines.index(SUMMARY_BEGIN)
        end = lines.index(SUMMARY_END, begin)
    except ValueError:
        return None
    for line in lines[begin + 1:end]:
        if line.startswith('{"schema":"bench.summary/'):
            summary = json.loads(line)
            return summary if summary.get("schema") == "bench.summary/v1" else None
    return None


def summaries_from_prefixed_log(text):
    """Every runner's own summary in a `kubectl logs --prefix` capture of several runners."""
    out = []
    for line in text.splitlines():
        m = PREFIXED.match(line)
        if m and m[1].startswith('{"schema":"bench.summary/'):
            out.append(json.loads(m[1]))
    return out


@dataclass
class RunEvidence:
    """What ci/e2e/lib.sh's follow_testrun keeps of one TestRun: stages, each runner's log and exit
    code; summary.json is written here from the runner log."""
    path: Path
    stages: list = field(default_factory=list)
    exits: dict = field(default_factory=dict)     # runner pod -> exit code
    logs: dict = field(default_factory=dict)      # runner pod -> log text
    summary: dict = None

    @classmethod
    def read(cls, path):
        path = Path(path)
        ev = cls(path)
        stage = path / "stage"
        ev.stages = stage.read_text().split() if stage.exists() else []
        ev.exits = {f.stem: int(f.read_text().strip()) for f in sorted(path.glob("*.exit"))
                    if f.read_text().strip()}
        ev.logs = {f.stem: f.read_text(errors="replace") for f in sorted(path.glob("*.log"))}
        for text in ev.logs.values():
            ev.summary = summary_from_log(text)
            if ev.summary is not None:
                (path / "summary.json").write_text(json.dumps(ev.summary))
                break
        return ev

    @property
    def log_text(self):
        return "\n".join(self.logs.values())

    def describe(self):
        return f"{self.path}: stages {' '.join(self.stages) or 'none'}, runner exits {self.exits or 'none'}"


class Cluster:
    """The local cluster as ci/e2e/step.sh env describes it: kubectl and helm with its kubeconfig,
    the release's names, the e2e Prometheus."""

    def __init__(self, env_json):
        self.info = env_json
        # PYTHONPATH: the checkout's packages for the checkers it starts (ci/test/dashboards/check.py)
        self.env = pythonpath.env(dict(os.environ, KUBECONFIG=env_json["KUBECONFIG"], PATH=env_json["PATH"],
                                       K6_NO_USAGE_REPORT="true", K6_AUTO_EXTENSION_RESOLUTION="false"))
        self.namespace = env_json["namespace"]
        self.release = env_json["release"]
        self.work = Path(env_json["work"])
        self.prom_url = env_json["prometheus"]
        self.prom = Prometheus(self.prom_url)

    def run(self, cmd, check=False, **kwargs):
        return run(cmd, check=check, env=self.env, **kwargs)

    def kubectl(self, *args, check=True, **kwargs):
        return self.run(["kubectl", *args], check=check, **kwargs)

    def kubectl_json(self, *args):
        return json.loads(self.kubectl(*args, "-o", "json").stdout)

    def helm(self, *args, check=True, **kwargs):
        return self.run(["helm", *args], check=check, **kwargs)

    def step(self, *args, check=True, timeout=None):
        return self.run(["bash", ROOT / "ci" / "e2e" / "step.sh", *args], check=check, timeout=timeout)

    def install(self, testid, *helm_args, check=True):
        return self.step("install", testid, *helm_args, check=check)

    def follow(self, directory, timeout_s, name=None, fresh=True):
        """Follows a TestRun (the release's, or NAME) to its end; its evidence in DIRECTORY (emptied
        first unless not fresh)."""
        if fresh:
            shutil.rmtree(directory, ignore_errors=True)
        self.step("follow", directory, str(timeout_s), *([name] if name else []), timeout=timeout_s + 120)
        return RunEvidence.read(directory)

    def delete_testruns(self, name=None):
        self.kubectl("-n", self.namespace, "delete", "testruns.k6.io", *([name] if name else ["--all"]),
                     "--ignore-not-found", "--wait=true")

    def backend_deployment(self):
        out = self.kubectl("-n", self.namespace, "get", "deployments", "-o", "jsonpath={.items[0].metadata.name}",
                           "-l", f"app.kubernetes.io/instance={self.release},app.kubernetes.io/component=backend").stdout
        return out.strip()

    def traefik_metrics(self):
        port = self.info["traefik_metrics_port"]
        return self.kubectl("get", "--raw",
                            f"/api/v1/namespaces/bench-traefik/services/traefik-metrics:{port}/proxy/metrics").stdout

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
        hooks = self.helm("get", "hooks", self.release, "-n", self.namespace).stdout
        return self.as_objects(hooks)

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


def wait_for(what, probe, timeout_s, interval_s=1.0):
    """Polls probe() until it returns something true (returned), or fails after timeout_s saying
    what it waited for and the last answer."""
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval_s)
    raise AssertionError(f"{what}: not within {timeout_s} s (last: {last!r})")

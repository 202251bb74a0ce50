"""Following a TestRun to its end and keeping its evidence before any cleanup can delete it: the
stages it went through, each runner's log and exit code, the backend's replicas as the API server
reported them, and the bench.summary/v1 JSON the runner printed."""
import json
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .kube import wait_for

# The lines scenarios/lib/summary-writer.js prints the bench.summary/v1 JSON between.
SUMMARY_BEGIN, SUMMARY_END = "BENCH_SUMMARY_JSON_BEGIN", "BENCH_SUMMARY_JSON_END"
SUMMARY_LINE = '{"schema":"bench.summary/'
# `kubectl logs --prefix` (the matrix runner's runners.log): "[pod/NAME/CONTAINER] line".
PREFIXED = re.compile(r"^\[[^\]]*\] (.*)$")
ENDED = ("finished", "error", "deleted", "runners-exited")
# A runner that fails before the start (a config error) leaves the TestRun at `created` for good:
# once every runner has exited, the operator gets this long, then the wait ends.
EXITED_GRACE_S = 20


def summary_from_log(text):
    """The bench.summary/v1 object printed between the markers, or None. A pod log interleaves k6's
    stderr (e.g. remote-write errors with Prometheus down) with stdout: only the JSON line counts."""
    lines = text.splitlines()
    try:
        begin = lines.index(SUMMARY_BEGIN)
        end = lines.index(SUMMARY_END, begin)
    except ValueError:
        return None
    for line in lines[begin + 1:end]:
        if line.startswith(SUMMARY_LINE):
            summary = json.loads(line)
            return summary if summary.get("schema") == "bench.summary/v1" else None
    return None


def summaries_from_prefixed_log(text):
    """Every runner's own summary in a `kubectl logs --prefix` capture of several runners."""
    return [json.loads(m[1]) for m in map(PREFIXED.match, text.splitlines())
            if m and m[1].startswith(SUMMARY_LINE)]


def summary_tables(text):
    """The human tables handleSummary wrote: the log without the JSON block and k6's own log lines."""
    out, inside = [], False
    for line in text.splitlines():
        if line == SUMMARY_BEGIN:
            inside = True
        if not inside and not line.startswith('time="'):
            out.append(line)
        if line == SUMMARY_END:
            inside = False
    return "\n".join(out)


@dataclass
class RunEvidence:
    """What follow() keeps of one TestRun: stages, each runner's log and exit code; summary.json is
    written beside them from the runner log."""
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
        ev.exits = {f.stem: int(f.read_text().strip()) for f in sorted(path.glob("*.exit")) if f.read_text().strip()}
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


def testrun_name(kube, timeout_s=60):
    """The name of the release namespace's TestRun, once it exists."""
    def name():
        return kube.kubectl("-n", kube.namespace, "get", "testruns.k6.io", "-o", "jsonpath={.items[0].metadata.name}",
                            check=False).stdout.strip()
    try:
        return wait_for(f"a TestRun in namespace {kube.namespace}", name, timeout_s)
    except TimeoutError as e:
        raise TimeoutError(f"{e} (is loadtest.enabled true?)") from None


class _Follower:
    """One TestRun's stage and runner pods, polled; each runner's log streamed to DIR/<pod>.log from
    the moment it leaves Pending, its exit code kept in DIR/<pod>.exit."""

    def __init__(self, kube, name, directory):
        self.kube, self.name, self.dir = kube, name, Path(directory)
        self.streams = {}      # pod -> kubectl logs -f process
        self.exited_at = None
        self.stage_file = self.dir / "stage"
        self.stage_file.write_text("")

    def stage(self):
        r = self.kube.kubectl("-n", self.kube.namespace, "get", "testruns.k6.io", self.name, "-o", "jsonpath={.status.stage}",
                              check=False)
        if r.returncode != 0:
            if "NotFound" not in r.stderr:
                raise RuntimeError(f"cannot read TestRun {self.name}: {r.stderr.strip()} (did the cluster stop?)")
            return "deleted"
        return r.stdout.strip()

    def record(self, stage):
        seen = self.stage_file.read_text().split()
        if not seen or seen[-1] != stage:
            with self.stage_file.open("a") as f:
                f.write(f"{stage}\n")

    def poll_runners(self):
        pods = self.kube.kubectl_json("-n", self.kube.namespace, "get", "pods", "-l", f"k6_cr={self.name},runner=true")
        for pod in pods["items"]:
            name = pod["metadata"]["name"]
            if name not in self.streams and pod.get("status", {}).get("phase") != "Pending":
                log = open(self.dir / f"{name}.log", "w")
                self.streams[name] = subprocess.Popen(["kubectl", "-n", self.kube.namespace, "logs", "-f", name],
                                                      stdout=log, stderr=subprocess.STDOUT, env=self.kube.env)
            for status in pod.get("status", {}).get("containerStatuses") or []:
                code = (status.get("state", {}).get("terminated") or {}).get("exitCode")
                if code is not None:
                    (self.dir / f"{name}.exit").write_text(f"{code}\n")
                break

    def all_exited(self):
        return bool(self.streams) and all((self.dir / f"{pod}.exit").exists() for pod in self.streams)

    def drain(self):
        """Runners end before the stage flips: let their log streams end."""
        for pod, proc in self.streams.items():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                print(f"log stream of {pod} did not end; cut", flush=True)


def follow(kube, name, directory, timeout_s):
    """Waits for TestRun NAME to reach finished or error (or be deleted, or every runner to have
    exited), keeping its evidence in DIRECTORY; returns True, or False on timeout."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    f = _Follower(kube, name, directory)
    deadline, stage = time.monotonic() + timeout_s, ""
    while time.monotonic() < deadline:
        stage = f.stage()
        f.record(stage)
        f.poll_runners()
        if f.all_exited():
            f.exited_at = f.exited_at or time.monotonic()
            if time.monotonic() - f.exited_at >= EXITED_GRACE_S:
                stage = "runners-exited"
        if stage in ENDED:
            f.drain()
            return True
        time.sleep(2)
    print(f"TestRun {name} still at stage '{stage}' after {timeout_s} s", flush=True)
    for proc in f.streams.values():
        proc.kill()
    return False


def follow_evidence(kube, directory, timeout_s, name=None, fresh=True):
    """follow() of NAME (the release namespace's TestRun when None) into DIRECTORY (emptied first when
    fresh); its RunEvidence, or TimeoutError naming where the evidence is."""
    directory = Path(directory)
    if fresh:
        shutil.rmtree(directory, ignore_errors=True)
    name = name or testrun_name(kube)
    if not follow(kube, name, directory, timeout_s):
        raise TimeoutError(f"TestRun {name} did not finish within {timeout_s} s; evidence in {directory}")
    return RunEvidence.read(directory)


class ReplicaWatch:
    """Records every change of the release's backend Deployment as the API server reports it,
    "<epoch> <spec.replicas> <status.readyReplicas>" lines in FILE, until stopped."""

    def __init__(self, kube, path):
        self.kube, self.path = kube, Path(path)
        deployments = kube.backend_deployments()
        if not deployments:
            raise RuntimeError(f"no backend Deployment of release {kube.release} in namespace {kube.namespace}")
        self.proc = subprocess.Popen(["kubectl", "-n", kube.namespace, "get", deployments[0], "--watch", "-o",
                                      'jsonpath={.spec.replicas} {.status.readyReplicas}{"\\n"}'],
                                     stdout=subprocess.PIPE, stderr=open(f"{self.path}.err", "w"), text=True, env=kube.env)
        self.thread = threading.Thread(target=self._stamp, daemon=True)
        self.thread.start()

    def _stamp(self):
        with self.path.open("w") as out:
            for line in self.proc.stdout:
                out.write(f"{time.time():.9f} {line.rstrip()}\n")
                out.flush()

    def stop(self):
        self.proc.kill()
        self.thread.join(timeout=10)

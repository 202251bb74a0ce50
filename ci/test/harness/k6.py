"""Runs of the project's k6 (scenarios/runner/build.sh) and what they leave: exit status, stdout,
stderr, summary.json (bench.summary/v1) and summary.txt."""
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

# k6 must never phone home or try to resolve extensions from the internet.
K6_ENV = {"K6_NO_USAGE_REPORT": "true", "K6_AUTO_EXTENSION_RESOLUTION": "false"}


@dataclass
class Run:
    name: str
    dir: Path
    rc: int

    @property
    def stdout(self):
        return (self.dir / "stdout").read_text(errors="replace")

    @property
    def stderr(self):
        return (self.dir / "stderr").read_text(errors="replace")

    @property
    def summary(self):
        """summary.json read with json; a missing or broken file fails the test that reads it."""
        path = self.dir / "summary.json"
        assert path.exists(), f"k6 {self.name} (exit {self.rc}) wrote no summary.json; stderr:\n{self.stderr[-3000:]}"
        return json.loads(path.read_text())

    @property
    def table(self):
        return (self.dir / "summary.txt").read_text()

    def __str__(self):
        return f"k6 {self.name} exit {self.rc} in {self.dir}"


def command(script, args=()):
    return ["k6", "run", "-q", "--log-format", "raw", "--address", "127.0.0.1:0", *map(str, args), str(script)]


def k6_environ():
    """The caller's environment without its BENCH_* variables, the base of a k6 run's: the scenarios
    refuse a BENCH_* they do not know (exit 107, "unknown variable"), and a test's own settings
    (BENCH_REPORT_KEEP, a BENCH_RATE left in the shell) must not reach the runs it starts."""
    return {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}


def environment(run_dir, name, env):
    return {**k6_environ(), **K6_ENV, "BENCH_SUMMARY_DIR": str(run_dir), "BENCH_TESTID": f"t-{name}",
            **{k: str(v) for k, v in env.items()}}


def start(run_dir, name, script, env=None, args=(), **popen):
    """k6 run SCRIPT in the background, output in run_dir (stdout, stderr, summary.*)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / "stdout", "wb") as out, open(run_dir / "stderr", "wb") as err:
        return subprocess.Popen(command(script, args), stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env=environment(run_dir, name, env or {}), **popen)


def run(run_dir, name, script, env=None, args=(), timeout=300, **popen):
    """k6 run SCRIPT to its end; the Run (its exit status is for the test to assert)."""
    proc = start(run_dir, name, script, env, args, **popen)
    try:
        rc = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    return Run(name, Path(run_dir), rc)


def only_error_class(summary, cls):
    """Every load request failed with CLS, no other class."""
    errors, total = summary["errors"], summary["requests"]["total"]
    return total > 0 and errors[cls] == total and sum(v for k, v in errors.items() if k != cls) == 0


def only_error_cause(summary, cls, cause):
    """Every load request failed with CLS and that cause."""
    return only_error_class(summary, cls) and summary["error_causes"][cls][cause] == summary["requests"]["total"]

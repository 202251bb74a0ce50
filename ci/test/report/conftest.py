"""Fixtures of the report tests: real short k6 runs (scenarios/*.js against the chart's backend nginx
on 127.0.0.1, remote-writing into a real Prometheus 2.42), one run split over several runners the
way k6-operator splits it, and the report generator itself.

The report (dashboards/report/benchreport) runs as users run it: `python -m benchreport` in the
venv ensure_report_venv builds (the project's one venv, from requirements.txt), as a subprocess
with this checkout's packages on PYTHONPATH (harness/pythonpath.py); the checkers that import the
report's client or jsonschema (checks/check_merge.py, contract.py) run the same way. The tests themselves read JSON with the standard library.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
from harness import pythonpath
from harness.servers import (  # noqa: F401  (nginx, prometheus: session fixtures)
    nginx, prometheus,
    Server, free_port, k6_environ, k6_remote_write, output_of, run, port_open, start_backend_nginx, start_prometheus, wait_until)

TESTDATA = TD = HERE / "testdata"
CHECKS = HERE / "checks"


@pytest.fixture(scope="session")
def work():
    """The session's folder (runs, reports, screenshots); BENCH_REPORT_KEEP=DIR copies its reports and
    screenshots to DIR at the end (the k6 runs never see that variable: harness k6_environ)."""
    # nginx workers run as nobody: they must reach the /bytes/ bodies under it.
    path = Path(tempfile.mkdtemp(prefix="bench-report-test."))
    path.chmod(0o755)
    (path / "out").mkdir()
    (path / "screenshots").mkdir()
    yield path
    keep = os.environ.get("BENCH_REPORT_KEEP")
    if keep:
        shutil.copytree(path / "out", Path(keep) / "out", dirs_exist_ok=True)
        shutil.copytree(path / "screenshots", Path(keep) / "screenshots", dirs_exist_ok=True)
        print(f"kept reports and screenshots in {keep}")
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def out(work):
    return work / "out"


@pytest.fixture(scope="session")
def servers():
    started = []
    yield started
    for s in reversed(started):
        s.stop()


@pytest.fixture(scope="session")
def report_python():
    """The python ensure_report_venv gives the report (the project's venv: pinned, cached, built when missing)."""
    r = run(["bash", "-c", '. "$0/lib/common.sh" && . "$0/dashboards/report/venv.sh" && ensure_report_venv >&2 '
             '&& printf %s "$REPORT_PYTHON"', ROOT])
    assert r.returncode == 0 and r.stdout, f"ensure_report_venv failed:\n{output_of(r)}"
    return r.stdout


@pytest.fixture(scope="session")
def runtime_tools():
    """k6 with bench's extensions; the Debian packages (chromium, nginx, Prometheus, curl) are
    installed by ci/test/all.sh from packages.txt before the part starts."""
    r = run(["bash", ROOT / "scenarios/runner/build.sh"])
    assert r.returncode == 0, f"scenarios/runner/build.sh failed:\n{output_of(r)}"
    assert shutil.which("k6"), "k6 is not on PATH after scenarios/runner/build.sh"


@dataclass
class Report:
    """The report generator's CLI and the checkers, in the project's venv with this checkout's packages."""
    python: str

    def env(self):
        return pythonpath.env()

    def __call__(self, *args):
        return run([self.python, "-m", "benchreport", *args], env=self.env())

    def script(self, path, *args):
        return run([self.python, path, *args], env=self.env(), cwd=ROOT)

    def prom(self, url, *args):
        return run([self.python, "-m", "benchreport.prometheus", "--url", url, *args], env=self.env())


@pytest.fixture(scope="session")
def report(report_python):
    return Report(report_python)


@pytest.fixture(scope="session")
def closed_port():
    """A port nothing listens on."""
    return free_port()


@dataclass
class K6Run:
    name: str
    rc: int
    summary_path: Path
    log: Path
    extra: dict = field(default_factory=dict)

    @property
    def summary(self):
        return json.loads(self.summary_path.read_text())


def started(run_, allowed=(0, 99)):
    """A run that did not end as a run (a crash, no summary) stops every check that reads it."""
    assert run_.rc in allowed, f"k6 run {run_.name} failed (exit {run_.rc}):\n{run_.log.read_text()[-3000:]}"
    assert run_.summary_path.is_file() and run_.summary_path.stat().st_size, f"k6 run {run_.name} wrote no summary"
    return run_


def static_run(prom, nginx, work, testid, rate, path):
    d = work / "runs" / testid
    d.mkdir(parents=True)
    rc = k6_remote_write(prom, testid, ROOT / "scenarios/static.js", [],
                         {"BENCH_TARGET_URL": nginx.url, "BENCH_PATH": path, "BENCH_RATE": rate,
                          "BENCH_DURATION": "8s", "BENCH_CONNECTIONS": 100, "BENCH_TESTID": testid,
                          "BENCH_SUMMARY_DIR": d}, d / "k6.log")
    return started(K6Run(f"k6 run {testid}", rc, d / "summary.json", d / "k6.log"))


@pytest.fixture(scope="session")
def real_runs(prometheus, nginx, work, closed_port):
    """Three real static.js runs (a, c comparable; b another rate and path) and emit.js's simulated
    churn telemetry with a crafted summary for its testid."""
    runs = {"a": static_run(prometheus, nginx, work, "report-a", 100, "/"),
            "c": static_run(prometheus, nginx, work, "report-c", 100, "/"),
            "b": static_run(prometheus, nginx, work, "report-b", 50, "/bytes/4k")}
    d = work / "runs/report-churn"
    d.mkdir(parents=True)
    rc = k6_remote_write(prometheus, "report-churn", ROOT / "ci/test/dashboards/testdata/emit.js",
                         ["--summary-export", d / "k6-export.json"],
                         {"BENCH_TARGET_URL": nginx.url, "BENCH_CLOSED_URL": f"http://127.0.0.1:{closed_port}",
                          "BENCH_RATE": 50, "BENCH_DURATION": "13s"}, d / "k6.log")
    assert rc == 0, f"k6 churn run failed (exit {rc}):\n{(d / 'k6.log').read_text()[-3000:]}"
    (d / "summary.json").write_text((TESTDATA / "churn-template.json").read_text().replace("TESTID", "report-churn"))
    runs["churn"] = K6Run("report-churn", rc, d / "summary.json", d / "k6.log",
                          {"export": json.loads((d / "k6-export.json").read_text())})
    return runs


@pytest.fixture(scope="session")
def runs(real_runs):
    """The real runs' summary files by name. Here, not in a test module: the report recipes ask for it
    through whichever module's test first needs the gen fixture (Generated.RECIPES)."""
    return {k: v.summary_path for k, v in real_runs.items()}


ERROR_SERVER_READY = "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1).close()"


@pytest.fixture(scope="session")
def error_servers(servers, work):
    """scenarios/tests/error_server.py refusing, resetting and stalling connections after the setup check."""
    ports = {}
    for mode in ("refuse", "reset", "stall"):
        port = free_port()
        s = Server(f"error server {mode}", [sys.executable, ROOT / "scenarios/tests/error_server.py", mode, port],
                   work / f"error-server-{mode}.log")
        servers.append(s)
        # a bare connect is no setup check: the server just closes it
        s.ready(lambda port=port: port_open(port), 15, f"error server {mode}")
        ports[mode] = port
    return ports


def run_runners(prom, work, testid, script, targets, env):
    """One run of SCRIPT split over one real k6 process per target the way k6-operator splits it
    (execution segments (i-1)/N:i/N of one sequence, --tag instance_id=i, one testid), all
    remote-writing into the same Prometheus; runner i loads targets[i-1]."""
    n = len(targets)
    sequence = ",".join(["0"] + [f"{i}/{n}" for i in range(1, n + 1)])
    procs = []
    for i, target in enumerate(targets, 1):
        d = work / "runs" / testid / f"runner-{i}"
        d.mkdir(parents=True)
        full = {**k6_environ(), **{k: str(v) for k, v in env.items()}, "BENCH_TARGET_URL": target,
                "BENCH_TESTID": testid, "BENCH_SUMMARY_DIR": str(d),
                "K6_PROMETHEUS_RW_SERVER_URL": f"{prom.url}/api/v1/write",
                "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM": "true", "K6_PROMETHEUS_RW_PUSH_INTERVAL": "1s"}
        log = open(d / "k6.log", "w")
        procs.append((d, log, subprocess.Popen(
            ["k6", "run", "--quiet", "--no-color", "-o", "experimental-prometheus-rw", "--tag", f"testid={testid}",
             "--tag", "controller=none", "--tag", f"instance_id={i}", "--execution-segment", f"{i - 1}/{n}:{i}/{n}",
             "--execution-segment-sequence", sequence, str(script)], stdout=log, stderr=subprocess.STDOUT, env=full)))
    runs = []
    for i, (d, log, p) in enumerate(procs, 1):
        rc = p.wait()
        log.close()
        runs.append(K6Run(f"runner {i} of {testid} ({script.name})", rc, d / "summary.json", d / "k6.log"))
    for r in runs:
        started(r)
    return runs


@pytest.fixture(scope="session")
def merge_runners(prometheus, nginx, error_servers, work, real_runs):
    """report-merge: runner 1 loads nginx, runner 2 a server that refuses connections after the
    setup check (connection errors), runner 3 one that resets them (read errors); 2 s of warm-up
    first (its requests and errors in no figure, the merge's as the runners' own)."""
    return run_runners(prometheus, work, "report-merge", ROOT / "scenarios/static.js",
                       [nginx.url, f"http://127.0.0.1:{error_servers['refuse']}",
                        f"http://127.0.0.1:{error_servers['reset']}"],
                       {"BENCH_RATE": 150, "BENCH_DURATION": "10s", "BENCH_WARMUP": "2s", "BENCH_CONNECTIONS": 60})


PART_RUNS = {
    "paths": ("paths.js", {"BENCH_PATH": "/bytes/4k", "BENCH_RATE": 100, "BENCH_DURATION": "3s", "BENCH_CONNECTIONS": 20}),
    "knee": ("max-rps.js", {"BENCH_RATE": 400, "BENCH_DURATION": "10s", "BENCH_CONNECTIONS": 40}),
    "ceiling": ("calibrate.js", {"BENCH_RATE": 400, "BENCH_DURATION": "10s", "BENCH_CONNECTIONS": 40}),
}


# Parts that must drop iterations: one VU per runner, each request held to BENCH_TIMEOUT by a server
# that never answers, at four times what that VU can send.
DROPPING_PATHS = {"BENCH_RATE": 40, "BENCH_DURATION": "2s", "BENCH_CONNECTIONS": 2, "BENCH_TIMEOUT": "200ms"}


@pytest.fixture(scope="session")
def dropping_runners(prometheus, error_servers, work):
    """Two runners of scenarios/paths.js against the stall server: every part drops iterations."""
    stall = f"http://127.0.0.1:{error_servers['stall']}"
    env = {**DROPPING_PATHS, "BENCH_URL_CLUSTERIP": stall, "BENCH_URL_POD": stall}
    return run_runners(prometheus, work, "report-dropping", ROOT / "scenarios/paths.js", [stall, stall], env)


@pytest.fixture(scope="session")
def merged_dropping(report, prometheus, dropping_runners, out):
    wait = settled(report, prometheus, "report-dropping")
    r = report("results", "--testid", "report-dropping", "--prometheus", prometheus.url,
               "--out", out / "merged-dropping", "--runner-summary", dropping_runners[0].summary_path)
    return wait, r, out / "merged-dropping"


@pytest.fixture(scope="session")
def part_runners(prometheus, nginx, work, merge_runners):
    """Two runners each of scenarios/paths.js (by_path), max-rps.js (the knee) and calibrate.js (the ceiling)."""
    runs = {}
    for kind, (script, env) in PART_RUNS.items():
        env = {**env, "BENCH_URL_CLUSTERIP": nginx.url, "BENCH_URL_POD": nginx.url} if kind == "paths" else env
        runs[kind] = run_runners(prometheus, work, f"report-{kind}", ROOT / "scenarios" / script,
                                 [nginx.url, nginx.url], env)
    return runs


# ---- merged by `results` ----

def settled(report, prometheus, testid):
    """Every runner's last remote write of the run is in Prometheus (the request count reads the
    same twice, 1 s apart; at most 30 s)."""
    return report.prom(prometheus.url, "settled", testid)


@pytest.fixture(scope="session")
def merged(report, prometheus, merge_runners, out):
    """`results` of report-merge, once Prometheus holds every runner's last samples."""
    wait = settled(report, prometheus, "report-merge")
    # no settings given: they come from the runners' k6_bench_run_info series
    r = report("results", "--testid", "report-merge", "--prometheus", prometheus.url, "--out", out / "merged",
               "--budget", "p50=1s")
    return wait, r, out / "merged"


@pytest.fixture(scope="session")
def merged_flags(report, prometheus, merged, merge_runners, out):
    """`results` with a runner summary and --rate/--duration, which win over the runners' series."""
    return report("results", "--testid", "report-merge", "--prometheus", prometheus.url,
                  "--out", out / "merged-flags", "--runner-summary", merge_runners[0].summary_path,
                  "--rate", "200", "--duration", "12s")


@pytest.fixture(scope="session")
def merged_parts(report, prometheus, part_runners, out):
    done = {}
    for kind, runners in part_runners.items():
        wait = settled(report, prometheus, f"report-{kind}")
        r = report("results", "--testid", f"report-{kind}", "--prometheus", prometheus.url,
                   "--out", out / f"merged-{kind}", "--runner-summary", runners[0].summary_path)
        done[kind] = (wait, r, out / f"merged-{kind}")
    return done


@pytest.fixture(scope="session")
def churn_merged(report, prometheus, real_runs, out):
    # emit.js is no entry script: it writes no summary and so no end-of-run record, and the merge can
    # only accept its series as they are (--allow-partial; the summary says so)
    return report("results", "--testid", "report-churn", "--prometheus", prometheus.url, "--out",
                  out / "churn-merged", "--rate", "50", "--duration", "13s", "--allow-partial")


# ---- chromium ----

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def renders_cleanly(html, png):
    """Headless chromium renders HTML with a new empty profile, logging every console message (page
    scripts, failed loads, CSP violations) and saving a screenshot; returns the problems: any console
    message, a missing or tiny screenshot, a DOM with fewer <svg> than the report's charts, no Verdict."""
    profile = Path(tempfile.mkdtemp(prefix="chromium.", dir=png.parent))
    r = run(["timeout", "90", "chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr",
             "--v=0", "--window-size=1200,3000", f"--screenshot={png}", f"file://{html}"])
    problems = [line for line in r.stderr.splitlines() if ":CONSOLE:" in line or ":CONSOLE(" in line]
    if not (png.is_file() and png.stat().st_size > 20000):
        problems.append(f"screenshot {png} missing or tiny")
    dom = run(["timeout", "90", "chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
               f"file://{html}"]).stdout
    want = len(list((html.parent / "charts").glob("*.svg")))
    if not (want > 0 and dom.count("<svg") >= want):
        problems.append(f"DOM has {dom.count('<svg')} <svg> for {want} charts")
    if "<h2>Verdict</h2>" not in dom:
        problems.append("rendered DOM lacks the Verdict section")
    shutil.rmtree(profile, ignore_errors=True)
    return problems


def time_stamp():
    return int(time.time())


class Generated:
    """`report --out out/NAME ARGS`, run once per name; tests read what it wrote.

    A name in RECIPES is built on first use by whichever test reads it (json, md, dir), so any test
    runs alone: RECIPES[NAME](fixture) gives its arguments, fixture(name) being a session fixture's
    value (a recipe that needs the real k6 runs asks for them; one on crafted summaries does not).
    Those fixtures live in this conftest: gen is made for whichever module's test asks first, and
    only what that module sees can be asked for."""

    RECIPES = {}

    def __init__(self, report, out, fixture):
        self.report, self.out, self.fixture, self.results = report, out, fixture, {}

    def __call__(self, name, *args):
        if name not in self.results:
            if not args and name in self.RECIPES:
                args = self.RECIPES[name](self.fixture)
            self.results[name] = self.report("--out", self.out / name, *map(str, args))
        return self.results[name]

    def dir(self, name):
        """The report folder NAME, written first if no test has asked for it yet."""
        if name in self.RECIPES:
            self(name)
        return self.out / name

    def json(self, name):
        return json.loads((self.dir(name) / "report.json").read_text())

    def md(self, name):
        return (self.dir(name) / "report.md").read_text()


def recipe(name):
    """Registers the function below as report NAME's recipe (Generated.RECIPES)."""
    def register(args_of):
        Generated.RECIPES[name] = args_of
        return args_of
    return register


@pytest.fixture(scope="session")
def gen(report, out, request):
    return Generated(report, out, request.getfixturevalue)

"""Fixtures of the dashboards tests: a real Prometheus 2.42 (remote-write receiver, native
histograms), the chart's backend nginx, a listener that never answers, and real k6 runs pushing into
that Prometheus; all on 127.0.0.1, started once per session and stopped at teardown.

The panels a run must fill are known before any run: check.py's own selector logic (presets,
globs, "!" take-backs) is applied to the dashboards' panels at collection time, so each required
panel is one test case; the run's report (check.py --report) is then read per panel.
"""
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CHECK = HERE.parents[1] / "tools" / "dashboards" / "check.py"
import check  # the checker (ci/tools/dashboards, pytest.ini's pythonpath): its selector logic and its Prometheus client
from harness import pythonpath
from harness.procs import readable_work_dir
from harness.servers import (  # noqa: F401  (re-exported to the test modules; nginx, prometheus: fixtures)
    nginx, prometheus,
    ROOT, STALL_SERVER, Server, free_port, k6_remote_write, output_of, port_open, run, start_backend_nginx,
    start_prometheus, wait_until)


# ---- @grafana/schema and tsc from npm, before collection ----

SCHEMA_TOOLS_PROBLEM = []


def pytest_configure(config):
    """ci/tools/grafana-schema.sh installs them (a stamp check when cached); test_lint.py's schema
    tests read GRAFANA_SCHEMA_TOOLS when their module loads. Where npm's registry cannot be reached
    the schema cases are SKIPPED with this reason, never dropped."""
    if os.environ.get("GRAFANA_SCHEMA_TOOLS"):
        return
    r = run(["bash", ROOT / "ci/tools/grafana-schema.sh"])
    if r.returncode == 0 and r.stdout.strip():
        os.environ["GRAFANA_SCHEMA_TOOLS"] = r.stdout.strip().splitlines()[-1]
    else:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        SCHEMA_TOOLS_PROBLEM.append(f"ci/tools/grafana-schema.sh could not install @grafana/schema ({last})")


# ---- required panels, known at collection time ----

class _NoData:
    """Stands in for Prometheus: every query succeeds empty, so run_dashboard lists every panel."""

    def query(self, *_args, **_kwargs):
        return {"status": "success", "data": {"resultType": "matrix", "result": []}}

    def label_values(self, *_args, **_kwargs):
        return {"status": "success", "data": []}


def required_panels(selectors):
    """(uid, title) of every panel check.py --require-data SELECTORS requires, in dashboard order."""
    reports = []
    for path in check.load_dashboards([check.DEFAULT_DASHBOARDS]):
        reports += check.run_dashboard(path, json.loads(path.read_text()), _NoData(), ["x"], 0, 3600, 30, 60)[0]
    assert not check.select_required(selectors, reports), f"a selector of {selectors} matches no panel"
    return [(r["uid"], r["title"]) for r in reports if r.get("required")]


def panel_ids(panels):
    return [f"{uid}/{title}" for uid, title in panels]


# ---- real servers ----

@pytest.fixture(scope="session")
def work():
    with readable_work_dir("bench-dashboards.") as path:
        yield path


@pytest.fixture(scope="session")
def servers():
    started = []
    yield started
    for s in reversed(started):
        s.stop()


@pytest.fixture(scope="session")
def runtime_tools():
    """k6 with bench's extensions (scenarios/runner/build.sh); the Debian packages (Prometheus,
    nginx, curl) are installed by ci/test/all.sh from packages.txt before the part starts."""
    r = run(["bash", ROOT / "scenarios/runner/build.sh"])
    assert r.returncode == 0, f"scenarios/runner/build.sh failed:\n{output_of(r)}"
    assert shutil.which("k6"), "k6 is not on PATH after scenarios/runner/build.sh"


@pytest.fixture(scope="session")
def stall_server(servers, work):
    """Accepts TCP connections (kernel backlog) and never answers: requests end in a client timeout."""
    port = free_port()
    s = Server("stall server", [sys.executable, "-c", STALL_SERVER, port], work / "stall.log")
    servers.append(s)
    s.url = f"http://127.0.0.1:{port}"
    s.ready(lambda: port_open(port), 15, "stall server")
    return s


def query_value(prom_url, expr):
    """The summed value of an instant query through the checker's client; None without series."""
    r = check.Prometheus(prom_url).query(expr, None, None, None, instant=True)
    assert r.get("status") == "success", f"query {expr!r}: {r.get('error')}"
    result = r["data"]["result"]
    if not result:
        return None
    total = sum(float(x["value"][1]) for x in result)
    return int(total) if total.is_integer() else total


def wait_for_value(prom_url, expr, want, timeout=30):
    """Remote write is asynchronous: k6's last push can land after k6 exits, so readers wait for
    the count k6 itself reported. Returns the last value (the checks show any gap)."""
    deadline = time.monotonic() + timeout
    while (got := query_value(prom_url, expr)) != want and time.monotonic() < deadline:
        time.sleep(0.2)
    return got


def summary_count(export, metric):
    """A counter's total from a k6 --summary-export file (0 when k6 has no such metric)."""
    m = json.loads(Path(export).read_text())["metrics"].get(metric)
    return int(m["count"]) if m else 0


def report_value(report, uid, title, ref):
    """The summed instant values of one query of one panel in the checker's report."""
    for p in report["panels"]:
        if p["uid"] == uid and p["title"] == title:
            for q in p["queries"]:
                if q["ref"] == ref:
                    return int(round(sum(float(r["value"]) for r in q.get("result", []))))
    raise AssertionError(f"no query {uid}/{title} {ref} in the checker's report")


@dataclass
class Run:
    """A k6 run and the checker's report on it."""
    testid: str
    start: int
    rc: int
    dir: Path
    check_rc: int = None
    check_log: str = ""
    report: dict = None

    def log(self):
        return (self.dir / "k6.log").read_text(errors="replace")[-4000:]

    def check(self, prom, selectors, start, extra=()):
        """check.py --require-data SELECTORS against this run; keeps its exit, output and report."""
        path = self.dir / "report.json"
        r = run([sys.executable, CHECK, "--quiet", "--prometheus", prom.url, "--testid", self.testid,
                 "--start", start, *extra, "--require-data", ",".join(selectors), "--report", path],
                env=pythonpath.env())
        self.check_rc, self.check_log = r.returncode, output_of(r)
        self.report = json.loads(path.read_text()) if path.is_file() and path.stat().st_size else None

    def panel(self, uid, title):
        assert self.report, f"the checker wrote no report (exit {self.check_rc}):\n{self.check_log}"
        return next((p for p in self.report["panels"] if p["uid"] == uid and p["title"] == title), None)


def assert_panel_has_data(run_, uid, title):
    p = run_.panel(uid, title)
    assert p is not None, f"no panel {uid}/{title} in the checker's report"
    assert p.get("required"), f"{uid}/{title} was not required by the checker (selectors changed?)"
    assert p["data"], f"panel {uid}/{title} has no data for {run_.testid}: {[q['expr'] for q in p['queries']]}"


def assert_report_consistent(run_, panels):
    """The checker's verdict agrees with its report: the required panels are the ones collected,
    no selector matched nothing, no query was rejected; a non-zero exit needs a reason in it."""
    assert run_.report, f"the checker wrote no report (exit {run_.check_rc}):\n{run_.check_log}"
    required = [(p["uid"], p["title"]) for p in run_.report["panels"] if p.get("required")]
    assert sorted(required) == sorted(panels), "the checker required other panels than collected"
    assert not run_.report["unmatched_selectors"], run_.report["unmatched_selectors"]
    assert not run_.report["query_errors"], "\n".join(run_.report["query_errors"])
    missing = [p for p in run_.report["panels"] if p.get("required") and not p["data"]]
    assert run_.check_rc == (1 if missing else 0), f"check.py exited {run_.check_rc}:\n{run_.check_log}"


@pytest.fixture(scope="session")
def emit_run(prometheus, nginx, stall_server, work):
    """testdata/emit.js for 30 s at 50 req/s: real requests, errors, timeouts and dropped iterations,
    simulated churn telemetry; its k6 --summary-export and Prometheus holding every count k6 made."""
    d = work / "emit"
    d.mkdir()
    testid, start = f"dash-{int(time.time())}", int(time.time())
    rc = k6_remote_write(prometheus, testid, HERE / "testdata/emit.js", ["--summary-export", d / "summary.json"],
                         {"BENCH_TARGET_URL": nginx.url, "BENCH_CLOSED_URL": f"http://127.0.0.1:{free_port()}",
                          "BENCH_STALL_URL": stall_server.url, "BENCH_RATE": 50, "BENCH_DURATION": "30s"},
                         d / "k6.log")
    r = Run(testid, start, rc, d)
    if rc == 0:
        wait_for_value(prometheus.url, f'sum(k6_http_reqs_total{{testid="{testid}"}})',
                       summary_count(d / "summary.json", "http_reqs"))
    return r


@pytest.fixture(scope="session")
def emit_data(emit_run):
    """The emit.js run for the checks that read its data: without it they cannot judge."""
    if emit_run.rc != 0:
        pytest.skip(f"testdata/emit.js exited {emit_run.rc} (see test_emit_run): no data to check")
    return emit_run

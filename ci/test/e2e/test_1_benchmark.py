"""The real dynamic benchmark (the e2e harness, ci/e2e/e2eharness/demo.py): the TestRun, the runner, the churn the API server saw,
the summary, Traefik, Prometheus, the report and the dashboards of this one run."""
import json
import re
import shutil
import socket
import ssl

from checks import (churn_pattern_problems, load_requests_mismatch, prometheus_series_missing,
                    summary_inconsistencies)
from cluster_lib import ROOT, run, runner_starved


def test_testrun_reached_finished(main_run):
    assert "finished" in main_run.evidence.stages, main_run.evidence.describe()


def test_runner_exited_zero(main_run):
    # k6 exits 99 when a threshold fails: this run expects none to fail, unless the runner's own
    # summary blames the runner (starved of CPU on the shared cores: cluster_lib.runner_starved)
    exits = main_run.evidence.exits
    assert exits, f"no runner exit code was captured ({main_run.evidence.describe()})"
    s = main_run.evidence.summary or {}
    allowed = (0, 99) if runner_starved(s) else (0,)
    # the requests and the kit's own verdict on the runner say why a threshold failed (99)
    assert all(code in allowed for code in exits.values()), \
        f"runner exits {exits}; requests {s.get('requests')}; runner flags " \
        f"{ {k: s.get('runner', {}).get(k) for k in ('cpu_bound', 'cpu_throttled', 'runtime_bound')} }"


def test_backend_followed_the_churn_pattern(main_run):
    """spec.replicas as the API server reported it (5 -> 7 -> 5 ...), see churn_pattern_problems."""
    watch = (main_run.path / "replicas.watch").read_text()
    pattern = main_run.summary["settings"]["churn_pattern"]
    assert churn_pattern_problems(watch, pattern) == [], f"pattern {pattern}; watch:\n{watch}"


def test_summary_is_consistent(main_run):
    s = main_run.summary
    assert summary_inconsistencies(s) == [], {k: s[k] for k in ("requests", "latency_ms", "errors", "error_causes")}


def test_runner_used_the_collector_settings(main_run):
    """The chart's GOGC=off and a GOMEMLIMIT reached the runner, which reported its runtime."""
    s = main_run.summary
    runner = s["runner"]
    assert runner["go_gc"] == "off", runner
    assert re.fullmatch(r"[0-9]+MiB", runner["go_memory_limit"]), runner
    assert isinstance(runner["sched_latency_ms"]["p99"], (int, float)), runner
    assert s["settings"]["replays"] == "counted_as_read_errors", s["settings"]


def test_traefik_served_the_requests_over_tls(kube, main_run):
    """Traefik's TLS counter on websecure grew by at least 99% of what k6 sent (requests cut by the
    end of the run may not be counted); more is expected: the churn probes go through Traefik too."""
    tls = kube.traefik_sum("traefik_entrypoint_requests_tls_total", "entrypoint=websecure") \
        - main_run.facts["traefik_tls_before"]
    total = main_run.summary["requests"]["total"]
    assert tls > 0 and tls * 100 >= total * 99, f"Traefik TLS requests {tls}, k6 load requests {total}"


def tls_handshake(address, server_name):
    """A TLS handshake with Traefik's websecure Service at ADDRESS naming SERVER_NAME: None when it
    completed, else the error."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with socket.create_connection((address, 443), timeout=5) as raw:
            with context.wrap_socket(raw, server_hostname=server_name):
                return None
    except (ssl.SSLError, OSError) as e:
        return e


def test_traefik_refuses_a_server_name_it_has_no_certificate_for(kube, main_run):
    """The run above passed through a strict Traefik (ci/e2e/manifests/traefik.yaml, sniStrict): a
    handshake naming the Service, as runners did before they sent the route's host, is refused, and
    one naming the route's host (bench.local) completes. So the run's load proves the runners'
    server name, as the SNI-choosing controllers would check it."""
    address = kube.kubectl("-n", "bench-traefik", "get", "service", "traefik", "-o", "jsonpath={.spec.clusterIP}").stdout
    assert tls_handshake(address, "traefik.bench-traefik.svc.cluster.local") is not None, "a Service-name handshake completed"
    assert tls_handshake(address, "bench.local") is None


def test_prometheus_holds_the_series(kube, main_run):
    assert prometheus_series_missing(kube, main_run.testid, main_run.facts["prom_time"]) == []


def test_summary_request_count_matches_prometheus(kube, main_run):
    assert load_requests_mismatch(kube, main_run.testid, main_run.facts["prom_time"], main_run.summary) is None


def test_report_of_the_run(kube, main_run):
    """dashboards/report on the real churn summary and its Prometheus series: scale events on the
    time axis, convergence rows, the environment a reader needs to reproduce the run, charts."""
    out = main_run.path / "report"   # kept with the run's evidence
    shutil.rmtree(out, ignore_errors=True)
    result = run(["bash", ROOT / "dashboards" / "report" / "report.sh", "--out", out,
                  main_run.path / "summary.json", "--prometheus", kube.prom_url])
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    md = (out / "report.md").read_text()
    assert len(report["runs"]) == 1
    assert report["runs"][0]["timeseries"], report["runs"][0]
    assert report["runs"][0]["scale_events_seen"] > 0, report["runs"][0]
    # every error of the run attributed to the nearest event before it within W, or to none; every
    # churn mark (the churn's events of one step) on the timeline, beside Traefik's reloads
    a = report["runs"][0]["attribution"]
    churn = [m for m in a["timeline"] if m["kind"] not in ("controller_reload", "route_change", "route_create")]
    assert sum(m["events"] for m in churn) == report["runs"][0]["scale_events_seen"], a
    assert a["errors_total"] == sum(main_run.summary["errors"].values()), (a, main_run.summary["errors"])
    conv = main_run.summary["convergence_ms"]
    assert conv["added"]["count"] > 0 and conv["removed"]["count"] > 0, conv
    assert re.search(r"^## Endpoint convergence", md, re.M)
    assert "environment.backend_replicas" in md and "environment.controller_version" in md
    assert "<svg" in (out / "report.html").read_text()


def test_dashboard_queries_return_data(kube, main_run):
    """The dashboards part's checker: every query parses against this Prometheus, and every k6,
    Traefik and cAdvisor panel returns data for this run."""
    result = kube.run(["python3", ROOT / "ci" / "tools" / "dashboards" / "check.py", "--quiet",
                       "--prometheus", kube.prom_url, "--testid", main_run.testid,
                       "--start", str(main_run.facts["start"]), "--end", "now",
                       "--require-data", "@k6,@traefik,@cadvisor",
                       "--report", main_run.path / "dashboards-report.json"])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

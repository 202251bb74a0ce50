"""Gateway API: a dynamic run through the HTTPRoute and a route-propagation run, each a helm
upgrade of this release (as the matrix runner makes them) with the overlay users add for Traefik's
Gateway provider (values/traefik-gateway.yaml) on the local-cluster values. Traefik runs outside
the release here, so its address is given. The Ingress is left out: on one entry point Traefik's
Ingress router for the same host wins (priority = its rule's length, 38, against 13 for the
HTTPRoute's Host + PathPrefix("/")), and the load would not take the HTTPRoute."""
import json
import shutil
from dataclasses import dataclass

import pytest

from checks import load_requests_mismatch, prometheus_series_missing, summary_inconsistencies
from cluster_lib import ROOT, RunEvidence, runner_starved, text_sum, wait_for

GATEWAY_ARGS = ("-f", ROOT / "values" / "traefik-gateway.yaml",
                "--set-string", "loadtest.gatewayUrl=https://traefik.bench-traefik.svc.cluster.local")
GATEWAY_SERVICES = "service=~.*@kubernetesgateway"
ROUTE_COUNT = 10


@dataclass
class GatewayRun:
    testid: str
    evidence: RunEvidence
    end: float           # the instant its Prometheus queries are evaluated at (its last push landed)
    served: float        # requests Traefik's Gateway-provider services counted during the run

    @property
    def summary(self):
        assert self.evidence.summary is not None, f"no summary JSON in the runner log ({self.evidence.describe()})"
        return self.evidence.summary


def gateway_run(kube, testid, name, *helm_args):
    """Installs run id TESTID-NAME with the Gateway overlay and HELM_ARGS, follows its TestRun like
    the first run; keeps Traefik's metrics before and after and its log as evidence."""
    run_id = f"{testid}-{name}"
    d = kube.work / "runs" / run_id
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    kube.delete_testruns()
    before = kube.traefik_metrics()
    (d / "traefik-before.prom").write_text(before)
    installed = kube.install(run_id, *GATEWAY_ARGS, *helm_args, check=False)
    (d / "helm.out").write_text(installed.stdout + installed.stderr)
    assert installed.returncode == 0, installed.stderr[-3000:]
    ev = kube.follow(d, 300, fresh=False)
    end = kube.prom.settled(run_id)
    (d / "end").write_text(f"{end:.3f}\n")
    after = kube.traefik_metrics()
    (d / "traefik-after.prom").write_text(after)
    # not *.log: the runner's log is the one *.log file of the run's folder
    (d / "traefik-log.txt").write_text(kube.kubectl("-n", "bench-traefik", "logs", "deployment/traefik",
                                                    "--since=5m", check=False).stdout)
    served = (text_sum(after, "traefik_service_requests_total", [GATEWAY_SERVICES])
              - text_sum(before, "traefik_service_requests_total", [GATEWAY_SERVICES]))
    return GatewayRun(run_id, ev, end, served)


@pytest.fixture(scope="module")
def dynamic_run(kube, main_run):
    """30 s of the dynamic scenario (5 <-> 7 churn) at 200 req/s through the HTTPRoute. 600
    connections: rate x timeout (400) holds the rate through one full 2 s stall only if every VU is
    free at its start; Traefik's Gateway provider stalled the first 2 s of 2 of 3 such runs here."""
    return gateway_run(kube, main_run.testid, "gateway", "--set-string", "loadtest.duration=30s",
                       "--set", "loadtest.connections=600")


@pytest.fixture(scope="module")
def propagation_run(kube, main_run):
    """10 HTTPRoutes, one a second, on the routes listener while 50 req/s flow through the HTTPRoute
    bench-backend, 30 s."""
    return gateway_run(kube, main_run.testid, "propagation",
                       "--set-string", "loadtest.scenario=route-propagation",
                       "--set-string", f"loadtest.routes.count={ROUTE_COUNT}",
                       "--set-string", "loadtest.routes.interval=1s",
                       "--set-string", "loadtest.routes.gatewayUrl=http://traefik.bench-traefik.svc.cluster.local",
                       "--set-string", "loadtest.duration=30s", "--set", "loadtest.rate=50",
                       "--set", "loadtest.connections=50")


def gateway_status(kube, listeners):
    """As Traefik reports them in the API: GatewayClass traefik Accepted, the release's Gateway
    Accepted and Programmed for its current generation with exactly LISTENERS Programmed, and the
    HTTPRoute Accepted with its backend resolved by Traefik's controller."""
    ok = lambda conds, t: any(c["type"] == t and c["status"] == "True" for c in conds or [])
    gc = kube.kubectl_json("get", "gatewayclass", "traefik")
    gw = kube.kubectl_json("-n", kube.namespace, "get", "gateway", kube.release)
    route = kube.kubectl_json("-n", kube.namespace, "get", "httproute", f"{kube.release}-backend")
    gw_conds = gw.get("status", {}).get("conditions", [])
    status = {
        "class": ok(gc.get("status", {}).get("conditions"), "Accepted"),
        "gateway": ok(gw_conds, "Accepted") and ok(gw_conds, "Programmed")
        and all(c.get("observedGeneration") == gw["metadata"]["generation"] for c in gw_conds),
        "programmed_listeners": sorted(l["name"] for l in gw.get("status", {}).get("listeners") or []
                                       if ok(l.get("conditions"), "Programmed")),
        "route_parents_ok": len([p for p in route.get("status", {}).get("parents") or []
                                 if p.get("controllerName") == "traefik.io/gateway-controller"
                                 and ok(p.get("conditions"), "Accepted") and ok(p.get("conditions"), "ResolvedRefs")]),
    }
    status["pass"] = (status["class"] and status["gateway"] and status["route_parents_ok"] == 1
                      and status["programmed_listeners"] == sorted(listeners))
    return status


def wait_programmed(kube, *listeners):
    """Waits up to 30 s: Traefik writes status after its configuration throttle."""
    last = {}

    def probe():
        last.update(gateway_status(kube, listeners))
        return last["pass"]
    try:
        wait_for("Gateway API status", probe, 30)
    except AssertionError:
        pytest.fail(f"Gateway API status: {last} (want listeners {sorted(listeners)})")


def test_gateway_class_gateway_and_route_programmed(kube, dynamic_run):
    wait_programmed(kube, "https")


def test_gateway_dynamic_run_finished_and_churned(dynamic_run):
    """The run ends on its own and churns. Its thresholds pass, unless the runner's own summary says
    the runner was short of CPU (dropped iterations blamed on the runner, not the target): on 2
    shared cores a runner starved for seconds drops iterations whatever the Gateway does (seen on
    CI: goroutines waiting 2.1 s for a CPU), and bench then rightly fails the run (99)."""
    ev = dynamic_run.evidence
    assert "finished" in ev.stages, ev.describe()
    s = dynamic_run.summary
    starved = runner_starved(s)
    allowed = (0, 99) if starved else (0,)
    assert ev.exits and all(c in allowed for c in ev.exits.values()), ev.describe()
    if starved and any(c == 99 for c in ev.exits.values()):
        print(f"the runner was starved of CPU (its own verdict): exit 99 accepted; {s['runner']['lag_ms']}")
    assert dynamic_run.summary["scale_events"] > 0, dynamic_run.summary["scale_events"]


def test_traefik_served_the_load_through_its_gateway_provider(dynamic_run):
    """At least 99% of k6's load requests (more: the churn probes go there too)."""
    served, total = dynamic_run.served, dynamic_run.summary["requests"]["total"]
    assert served > 0 and served * 100 >= total * 99, f"Gateway-provider requests {served}, k6 load requests {total}"


def test_gateway_summary_is_consistent(dynamic_run):
    assert summary_inconsistencies(dynamic_run.summary) == []


def test_gateway_prometheus_holds_the_series(kube, dynamic_run):
    assert prometheus_series_missing(kube, dynamic_run.testid, dynamic_run.end) == []


def test_gateway_summary_request_count_matches_prometheus(kube, dynamic_run):
    assert load_requests_mismatch(kube, dynamic_run.testid, dynamic_run.end, dynamic_run.summary) is None


def test_route_propagation_routes_listener_programmed(kube, propagation_run):
    wait_programmed(kube, "https", "routes")


def test_route_propagation_every_route_served_one_sample_each(kube, propagation_run):
    """Every route served, one propagation sample each in the summary and in Prometheus
    (k6_bench_route_propagation_seconds, kind httproute), as many routes created in both, the base
    route answered 2xx only, and the runner exited 0."""
    ev = propagation_run.evidence
    assert "finished" in ev.stages, ev.describe()
    assert ev.exits and all(c == 0 for c in ev.exits.values()), ev.describe()
    s = propagation_run.summary
    r = s["routes"]["by_kind"]["httproute"]
    assert r["created"] == ROUTE_COUNT and r["serving"] == ROUTE_COUNT and r["unconverged"] == 0, r
    p = r["propagation_ms"]
    assert p["count"] == ROUTE_COUNT and 0 < p["min"] <= p["max"], p
    assert r["load_non_2xx"] == 0, r
    assert s["by_path"]["httproute"]["requests"]["total"] > 0, s["by_path"]
    t = f'testid="{propagation_run.testid}", kind="httproute"'
    samples = kube.prom_value(f"histogram_count(sum(k6_bench_route_propagation_seconds{{{t}}}))", propagation_run.end)
    created = kube.prom_value(f"sum(k6_bench_routes_created_total{{{t}}})", propagation_run.end)
    assert (samples, created) == (ROUTE_COUNT, ROUTE_COUNT), f"Prometheus: {samples} samples, {created} routes created"


def test_route_propagation_controller_cost_per_route(kube, propagation_run):
    """make results on the propagation run: Traefik's CPU-seconds and peak memory per route created,
    from the kubelet's cAdvisor and the run's bench_routes_created series; the report has the columns."""
    out = kube.work / "runs" / f"{propagation_run.testid}-results"
    r = kube.run(["bash", ROOT / "dashboards" / "report" / "report.sh", "results", "--testid", propagation_run.testid,
                  "--prometheus", kube.prom_url, "--out", out, "--wait-settled", "60"])
    assert r.returncode == 0, f"results exited {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    cost = json.loads((out / "summary.json").read_text())["controller_cost"]
    assert cost["routes"] == ROUTE_COUNT and cost["unknown_reason"] is None, cost
    assert cost["cpu_seconds_per_route"] == pytest.approx(cost["cpu_seconds"] / ROUTE_COUNT, rel=0.002), cost
    assert cost["memory_peak_bytes_per_route"] == round(cost["memory_peak_bytes"] / ROUTE_COUNT), cost
    assert "CPU-seconds per route" in (out / "report.md").read_text()


def test_route_propagation_routes_deleted_after_the_run(kube, propagation_run):
    left = kube.kubectl("-n", kube.namespace, "get", "httproutes.gateway.networking.k8s.io,ingresses",
                        "-l", "bench/route-run", "-o", "name").stdout.split()
    assert f"routes: httproute: deleted the {ROUTE_COUNT} route(s)" in propagation_run.evidence.log_text
    assert left == [], f"routes labelled bench/route-run after the run: {left}"

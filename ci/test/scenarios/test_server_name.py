"""The TLS server name runners send is the route's host (BENCH_TARGET_HOST), not the URL's.

Runners reach a controller by its Service name with the route's host in the Host header. Controllers
that choose the certificate by server name refuse any other name at the handshake (NGINX Ingress
Controller without a default certificate, NGINX Gateway Fabric, Envoy Gateway and Istio listeners
with a hostname) and NGINX Gateway Fabric answers 421 when the name and the Host differ. The `sni`
nginx server of conftest.py does both: a run against it by another name than bench.local sends load
only when every request (setup's check through k6's http module, the load through k6/x/bench) names
bench.local. Before k6/x/bench matched the name to the Host header, setup's check failed (exit 107)."""
import pytest


@pytest.fixture(scope="module")
def sni_run(k6, servers):
    # "localhost" stands for the Service name: the server's address by a name it has no certificate for
    url = f"https://localhost:{servers.ports['sni']}"
    # VUs to spare beyond the 10 connections (as the chart's ceiling gives them): on a busy machine
    # the first TLS handshakes can hold 10 VUs past an iteration's slot (seen: exit 99, "Insufficient
    # VUs"), which is not what this run checks
    run = k6("sni", "static.js", dict(BENCH_TARGET_URL=url, BENCH_TARGET_HOST="bench.local", BENCH_RATE=100,
                                      BENCH_DURATION="2s", BENCH_CONNECTIONS=10, BENCH_MAX_CONNECTIONS=100),
             ["--tag", "controller=none"])
    run.port = servers.ports["sni"]
    return run


def test_run_by_another_name_exits_0(sni_run):
    assert sni_run.rc == 0, sni_run.stderr[-3000:]


def test_every_request_reached_the_route_by_its_name(sni_run):
    s = sni_run.summary
    served = [r for r in sni_run.access if r.port == sni_run.port and r.from_k6]
    assert s["requests"]["total"] >= 190 and len(served) == s["requests"]["total"], (s["requests"], len(served))
    assert {r.status for r in served} == {200}, sorted({r.status for r in served})


def test_no_request_failed(sni_run):
    assert sum(sni_run.summary["errors"].values()) == 0, sni_run.summary["errors"]


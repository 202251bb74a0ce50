"""The Role: a runner without it stops in setup with what it needs; bad values stop k6 before load."""
import pytest

from .conftest import SCENARIOS, run


def test_without_role_run_stops_naming_rules(gateway):
    r = gateway.run_k6("forbidden", "route-propagation.js", BENCH_KUBECONFIG=gateway.api.kubeconfig("bench-nobody"),
                       BENCH_DURATION="2s")
    assert r.rc != 0, r.stderr[-3000:]
    assert "forbidden" in r.stderr, r.stderr[-3000:]
    assert "need create, get, update, delete and list on httproutes.gateway.networking.k8s.io" in r.stderr, \
        r.stderr[-3000:]


# `k6 inspect` is what the k6-operator initializer runs: a bad value must fail it with its reason.
@pytest.mark.parametrize("script, var, expected", [
    pytest.param("route-scale.js", "BENCH_ROUTE_KIND=grpcroute",
                 r'invalid BENCH_ROUTE_KIND=\"grpcroute\": expected httproute, ingress or both', id="grpcroute"),
    pytest.param("route-change.js", "BENCH_ROUTE_BACKENDS=bench-backend:80",
                 "route-change repoints routes between Services: expected at least two", id="one-backend"),
])
def test_k6_inspect_refuses(k6_bin, script, var, expected):
    result = run([k6_bin, "inspect", "-e", var, SCENARIOS / script])
    output = result.stdout + result.stderr
    assert result.returncode != 0, f"k6 inspect {script} -e {var} succeeded:\n{output}"
    assert expected in output, output

"""The migration A/B in one run: 5 HTTPRoutes, then 5 Ingresses, one every second, while 50 req/s
flow on the base route. Each route's time from its create call to its first 200 must be there,
above 0 and bounded (Traefik applies configuration at most every 2 s: its providersThrottleDuration)."""
import pytest

from .conftest import NS, why_not_zero

KINDS = ["httproute", "ingress"]


@pytest.fixture(scope="module")
def propagation(gateway):
    # A labelled route an earlier run left: setup must delete it.
    api = gateway.api
    api.kubectl("admin", "-n", NS, "create", "ingress", "bench-route-i-99", "--rule=left.example/*=bench-backend:80")
    api.kubectl("admin", "-n", NS, "label", "ingress", "bench-route-i-99", "bench/route-run=an-earlier-run")
    run = gateway.run_k6("propagation", "route-propagation.js", BENCH_ROUTE_KIND="both", BENCH_ROUTE_COUNT=5,
                         BENCH_ROUTE_INTERVAL="1s", BENCH_DURATION="12s", BENCH_ROUTE_TIMEOUT="20s")
    run.left = gateway.routes_left()
    return run


def test_exit_0_and_both_kinds_in_order(propagation):
    assert propagation.rc == 0, why_not_zero(propagation)
    s = propagation.summary
    assert list(s["by_path"]) == KINDS
    assert list(s["routes"]["by_kind"]) == KINDS
    assert s["routes"]["kind"] == "both"


@pytest.mark.parametrize("kind", KINDS)
def test_five_routes_timed(propagation, kind):
    r = propagation.summary["routes"]["by_kind"][kind]
    p = r["propagation_ms"]
    assert (r["created"], r["serving"], r["unconverged"]) == (5, 5, 0), r
    assert p["count"] == 5, p
    assert 0 < p["min"] <= p["p50"] <= p["max"] < 10000, p


@pytest.mark.parametrize("kind", KINDS)
def test_404s_before_first_200_counted(propagation, kind):
    statuses = propagation.summary["routes"]["by_kind"][kind]["pre_ready_statuses"]
    assert statuses["404"] > 0, statuses
    assert sum(statuses.values()) == statuses["404"], statuses


@pytest.mark.parametrize("kind", KINDS)
def test_base_route_kept_answering(propagation, kind):
    s = propagation.summary
    assert s["routes"]["by_kind"][kind]["load_non_2xx"] == 0, s["routes"]["by_kind"][kind]
    assert s["by_path"][kind]["requests"]["total"] >= 500, s["by_path"][kind]["requests"]
    errors = s["by_path"][kind]["errors"]
    assert errors and sum(errors.values()) == 0, errors


def test_table_shows_routes(propagation):
    assert any(line.startswith("Routes (propagation, 5 per kind)") for line in propagation.table.splitlines()), \
        propagation.table


def test_setup_deleted_earlier_runs_route(propagation):
    assert "deleted 1 route(s) an earlier run left" in propagation.stderr, propagation.stderr[-3000:]


def test_no_labelled_route_left(propagation):
    assert propagation.left == 0

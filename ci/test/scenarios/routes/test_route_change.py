"""Live routes repointed between two Services every 300 ms under 50 req/s: Traefik must answer every
request 2xx. The same with one Service without endpoints must count errors (exit 99)."""
import pytest

from .conftest import why_not_zero

KINDS = ["httproute", "ingress"]


@pytest.fixture(scope="module")
def change(gateway):
    run = gateway.run_k6("change", "route-change.js", BENCH_ROUTE_KIND="both", BENCH_ROUTE_COUNT=3,
                         BENCH_ROUTE_INTERVAL="300ms", BENCH_DURATION="8s")
    run.left = gateway.routes_left()
    return run


@pytest.fixture(scope="module")
def broken(gateway, change):
    # After the healthy run (the order of the bash original): each run's teardown is checked alone.
    run = gateway.run_k6("change-broken", "route-change.js", BENCH_ROUTE_COUNT=3, BENCH_ROUTE_INTERVAL="300ms",
                         BENCH_RATE=100, BENCH_DURATION="5s", BENCH_ROUTE_BACKENDS="bench-backend:80,bench-empty:80")
    run.left = gateway.routes_left()
    return run


def test_exit_0_no_non_2xx(change):
    # The run's threshold fails it (exit 99) on any non-2xx answer.
    assert change.rc == 0, why_not_zero(change)


@pytest.mark.parametrize("kind", KINDS)
def test_changes_without_errors(change, kind):
    r = change.summary["routes"]["by_kind"][kind]
    assert r["changes"] >= 15, r
    assert r["change_errors"] == 0, r
    assert r["serving"] == 3, r


@pytest.mark.parametrize("kind", KINDS)
def test_load_went_through_routes(change, kind):
    path = change.summary["by_path"][kind]
    assert path["requests"]["total"] >= 350, path["requests"]
    assert path["errors"] and sum(path["errors"].values()) == 0, path["errors"]


def test_teardown_deleted_routes(change):
    assert change.left == 0


def test_broken_change_exit_99_errors_counted(broken):
    assert broken.rc == 99, why_not_zero(broken)
    s = broken.summary
    change_errors = s["routes"]["by_kind"]["httproute"]["change_errors"]
    assert change_errors > 0, s["routes"]
    assert s["errors"] and change_errors == sum(s["errors"].values()), (change_errors, s["errors"])


def test_broken_change_table_says_failed(broken):
    assert "route-change FAILED for httproute" in broken.table, broken.table


def test_broken_change_teardown_deleted_routes(broken):
    assert broken.left == 0

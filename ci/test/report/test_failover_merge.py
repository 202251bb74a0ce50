"""benchreport.merge's backend-failover section, from canned Prometheus answers: what make results
writes for a merged backend-failover run (the runner's own summary is checked by the scenarios part)."""
import json

from benchreport.merge import _backend_failover

from conftest import ROOT
from test_dataplane_merge import CannedQueries

RUN = '{testid="t"}'


def section(budget, errors, events=None):
    q = CannedQueries({
        "k6_bench_scale_events_total": [({}, 3)] if events is None else events,
        "k6_bench_failover_budget": budget,
        "k6_bench_failover_flap_seconds": [({}, 1.5)],
    })
    return _backend_failover(q, RUN, dict.fromkeys(("connection", "timeout", "read", "http_4xx", "other"), 0) | errors), q


def test_the_budget_and_mode_from_the_gauge_decide_the_gate():
    d, q = section([({"mode": "errors"}, 15)], {"http_5xx": 12})
    assert (d["mode"], d["flaps"], d["requests_lost"], d["errors_per_flap"]) == ("errors", 3, 12, 4.0), d
    assert d["gate"] == {"max_errors": 15, "errors_per_flap": None, "passed": True}, d
    assert any('action="backend_unhealthy"' in a for a in q.asked) and any('action="backend_healthy"' in a for a in q.asked)
    assert any('measure="not_ready"' in a for a in q.asked), q.asked
    over, _ = section([({"mode": "readiness"}, 0)], {"http_5xx": 1})
    assert over["gate"] == {"max_errors": 0, "errors_per_flap": None, "passed": False}, over


def test_without_the_gauge_the_budget_is_zero_and_the_schedule_null():
    d, _ = section([], {"http_5xx": 0}, events=[])
    assert (d["mode"], d["flaps"], d["errors_per_flap"], d["unhealthy_ms_set"], d["healthy_ms_set"]) == (None, 0, None, None, None)
    assert d["gate"]["max_errors"] == 0 and d["gate"]["passed"], d


def test_the_keys_are_the_contracts():
    schema = json.loads((ROOT / "scenarios" / "contract.json").read_text())["summarySchema"]["properties"]["backend_failover"]
    d, _ = section([({"mode": "errors"}, 15)], {"http_5xx": 12})
    assert sorted(d) == sorted(schema["required"]) == sorted(schema["properties"])
    assert sorted(d["gate"]) == sorted(schema["properties"]["gate"]["required"])


def test_close_mode_merged_its_read_errors_against_the_budget_and_the_mode_in_the_contract():
    """Mode close: the proxy's answers to connections closed unanswered (5xx) or, straight to the
    pod, read errors count like any class; the mode from the gauge is one the contract allows."""
    d, _ = section([({"mode": "close"}, 20)], {"read": 15, "http_5xx": 10})
    assert (d["mode"], d["requests_lost"], d["gate"]) == ("close", 25, {"max_errors": 20, "errors_per_flap": None,
                                                                        "passed": False}), d
    schema = json.loads((ROOT / "scenarios" / "contract.json").read_text())["summarySchema"]["properties"]["backend_failover"]
    assert d["mode"] in schema["properties"]["mode"]["enum"], schema["properties"]["mode"]

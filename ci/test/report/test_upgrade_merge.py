"""benchreport.merge's controller-upgrade section, from canned Prometheus answers: what make results
writes for a merged controller-upgrade run (the runner's own summary is checked by the scenarios part)."""
import json

from benchreport.merge import _controller_upgrade
from test_dataplane_merge import ERRORS, RUN, CannedQueries

from conftest import ROOT


def section(rollout_count=1, ready=(({"pod": "1"}, 1.2), ({"pod": "2"}, 2.6))):
    # answers by a text of the query: the first key it contains
    q = CannedQueries({
        "histogram_count(sum(k6_bench_upgrade_rollout": [({}, rollout_count)] if rollout_count else [],
        "histogram_sum(sum(k6_bench_upgrade_rollout": [({}, 3.1004)],
        'event="terminating"': [({"pod": "1"}, 1.45), ({"pod": "2"}, 3.0)],
        'event="ready"': list(ready),
        'action="controller_rollout"': [({}, 1)],
        'action="controller_pod_terminating"': [({}, 2)],
        'action="controller_pod_ready"': [({}, len(ready))],
    })
    return _controller_upgrade(q, RUN, ERRORS)


def test_each_pod_number_from_its_two_series_and_the_rollout():
    u = section()
    assert u["steps"] == [{"step": 1, "old_terminating_ms": 1450.0, "new_ready_ms": 1200.0},
                          {"step": 2, "old_terminating_ms": 3000.0, "new_ready_ms": 2600.0}]
    assert (u["rollouts"], u["incomplete"], u["rollout_ms"], u["pods_terminating"], u["pods_ready"]) == (1, 0, 3100.4, 2, 2)


def test_a_pod_without_its_ready_sample_is_null_and_no_rollout_sample_is_incomplete():
    u = section(rollout_count=0, ready=(({"pod": "1"}, 1.2),))
    assert u["steps"][1] == {"step": 2, "old_terminating_ms": 3000.0, "new_ready_ms": None}
    assert (u["incomplete"], u["rollout_ms"]) == (1, None)


def test_lost_requests_fail_the_gate_and_what_prometheus_lacks_is_null():
    u = section()
    assert u["requests_lost"] == 4 and u["gate"] == {"max_errors": 0, "passed": False}
    assert [u[k] for k in ("kind", "namespace", "name", "container", "image_from", "image_to", "at_end")] == [None] * 7
    assert u["annotation"] == "bench/restartedAt"


def test_the_keys_are_the_contracts():
    schema = json.loads((ROOT / "scenarios" / "contract.json").read_text())["summarySchema"]["properties"]["controller_upgrade"]
    u = section()
    assert sorted(u) == sorted(schema["required"]) == sorted(schema["properties"])
    assert sorted(u["steps"][0]) == sorted(schema["properties"]["steps"]["items"]["required"])

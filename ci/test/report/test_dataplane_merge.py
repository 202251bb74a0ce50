"""benchreport.merge's dataplane-scale section, from canned Prometheus answers: what make results
writes for a merged dataplane-scale run (the runner's own summary is checked by the scenarios part)."""
import json

from benchreport.merge import RunQueries, _dataplane_scale

from conftest import ROOT

RUN = '{testid="t"}'
ERRORS = {"connection": 3, "timeout": 1, "read": 0, "http_5xx": 0, "http_4xx": 0, "other": 0}


class CannedQueries(RunQueries):
    """RunQueries answering each query from ANSWERS, by the metric it names: [(labels, value)]."""

    def __init__(self, answers):
        super().__init__(None, "t", 0, 60)
        self.answers, self.asked = answers, []

    def vector(self, query):
        self.asked.append(query)
        metric = next(m for m in self.answers if m in query)
        return [{"metric": labels, "value": [61, str(v)]} for labels, v in self.answers[metric]]


def section(ready):
    q = CannedQueries({
        "k6_bench_dataplane_step": [({"step": "1"}, 2), ({"step": "2"}, 1)],
        "k6_bench_dataplane_ready_seconds": ready,
        "k6_bench_dataplane_probe_failures_total": [({"step": "1"}, 0), ({"step": "2"}, 3)],
        "k6_bench_dataplane_replicas": [({}, 1)],
    })
    return _dataplane_scale(q, RUN, ERRORS), q


def test_each_step_from_its_series_and_the_start():
    d, _ = section([({"step": "1"}, 3.124), ({"step": "2"}, 1.27)])
    assert d["steps"] == [{"step": 1, "from": 1, "to": 2, "ready_ms": 3124.0, "probe_failures": 0},
                          {"step": 2, "from": 2, "to": 1, "ready_ms": 1270.0, "probe_failures": 3}]
    assert (d["start_replicas"], d["unready"], d["ready_ms"]) == (1, 0, {"count": 2, "p50": 2197.0, "max": 3124.0})


def test_a_step_without_a_ready_sample_is_unready():
    d, _ = section([({"step": "1"}, 3.124)])
    assert d["steps"][1]["ready_ms"] is None and d["unready"] == 1 and d["ready_ms"]["count"] == 1


def test_lost_requests_fail_the_gate_and_what_prometheus_lacks_is_null():
    d, q = section([({"step": "1"}, 3.124), ({"step": "2"}, 1.27)])
    assert d["requests_lost"] == 4 and d["gate"] == {"max_errors": 0, "passed": False}
    assert [d[k] for k in ("namespace", "deployment", "scaled", "mode", "levels", "levels_reached")] == [None] * 6
    assert any('state="start"' in a for a in q.asked), q.asked


def test_the_keys_are_the_contracts():
    schema = json.loads((ROOT / "scenarios" / "contract.json").read_text())["summarySchema"]["properties"]["dataplane_scale"]
    d, _ = section([({"step": "1"}, 3.124), ({"step": "2"}, 1.27)])
    assert sorted(d) == sorted(schema["required"]) == sorted(schema["properties"])
    assert sorted(d["steps"][0]) == sorted(schema["properties"]["steps"]["items"]["required"])

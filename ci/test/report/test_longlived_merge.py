"""benchreport.merge's long-lived section, from canned Prometheus answers: what make results writes
for a merged long-lived run (the runner's own summary is checked by the scenarios part)."""
import json

from benchreport.merge import _long_lived

from conftest import ROOT
from test_dataplane_merge import CannedQueries

RUN = '{testid="t"}'
NO_ERRORS = dict.fromkeys(("connection", "timeout", "read", "http_5xx", "http_4xx", "other"), 0)


def section(answers, errors=None):
    q = CannedQueries({"k6_bench_streams_opened_total": [], "k6_bench_streams_broken_total": [],
                       "k6_bench_stream_open_errors_total": [], "k6_bench_stream_messages_total": [],
                       "k6_bench_stream_messages_lost_total": [], "k6_bench_stream_broken_after_seconds": [], **answers})
    return _long_lived(q, RUN, NO_ERRORS | (errors or {})), q


def test_kinds_with_series_and_their_counts():
    d, q = section({"k6_bench_streams_opened_total": [({}, 5)], "k6_bench_stream_messages_total": [({}, 100)]})
    assert d["kinds"] == ["http", "websocket", "grpc"] and d["by_kind"]["grpc"]["opened"] == 5, d
    assert d["messages"] == 300 and d["broken"] == 0 and d["gate"]["passed"], d
    assert any('kind="websocket"' in a for a in q.asked) and any('cause="reset"' in a for a in q.asked), q.asked


def test_no_stream_series_no_kind():
    d, _ = section({})
    assert (d["kinds"], d["by_kind"], d["messages"]) == ([], {}, 0), d


def test_a_break_by_the_path_or_a_lost_request_fails_the_gate():
    broken, _ = section({"k6_bench_streams_opened_total": [({}, 2)], "k6_bench_streams_broken_total": [({}, 1)]})
    # the canned answer counts 1 for each kind and each cause
    assert (broken["broken_by_path"], broken["broken_by_backend"], broken["gate"]["passed"]) == (3, 3, False), broken
    lost, _ = section({"k6_bench_streams_opened_total": [({}, 2)]}, {"read": 2})
    assert (lost["requests_lost"], lost["gate"]["passed"]) == (2, False), lost


def test_the_keys_are_the_contracts():
    schema = json.loads((ROOT / "scenarios" / "contract.json").read_text())["summarySchema"]["properties"]["long_lived"]
    d, _ = section({"k6_bench_streams_opened_total": [({}, 2)]})
    assert sorted(d) == sorted(schema["required"]) == sorted(schema["properties"])
    kind = schema["properties"]["by_kind"]["additionalProperties"]
    assert sorted(d["by_kind"]["http"]) == sorted(kind["required"])

"""benchreport.attribution: errors cut at the scale events, from the error counters' samples; the
report's sentence on the share that followed an experiment's own event."""
from benchreport.attribution import BASELINE, errors_by_event
from benchreport.document import CONTROLLER_DELETION, _share_after
from benchreport.prometheus import TimeSeries


def series(totals, events):
    ts = TimeSeries("t")
    ts.error_totals, ts.scale_events = totals, events
    return ts


def test_each_window_gets_the_errors_until_the_next_event():
    # timeouts: 2 before the first event, 5 after the scale at 10 s, none after the rollout at 20 s;
    # 5xx: 1 after the rollout
    totals = {"timeout": [(0, 0), (5, 2), (10, 2), (15, 7), (20, 7), (25, 7)],
              "http_5xx": [(0, 0), (10, 0), (20, 0), (25, 1)]}
    w = errors_by_event(series(totals, [(10, "scale", 1), (20, "rollout", 1)]))
    assert [x["action"] for x in w] == [BASELINE, "scale", "rollout"]
    assert [x["errors"] for x in w] == [{"timeout": 2}, {"timeout": 5}, {"http_5xx": 1}]
    assert [(x["from_s"], x["to_s"]) for x in w] == [(0, 10), (10, 20), (20, 25)]
    assert sum(x["total"] for x in w) == 8


def test_no_event_is_one_baseline_window():
    w = errors_by_event(series({"read": [(0, 0), (9, 4)]}, []))
    assert len(w) == 1 and w[0]["action"] == BASELINE and w[0]["total"] == 4


def test_no_error_counters_no_windows():
    assert errors_by_event(series({}, [(3, "scale", 1)])) == [] and errors_by_event(None) == []


def test_the_report_says_which_share_of_the_errors_followed_the_experiments_event():
    totals = {"connection": [(0, 0), (10, 1), (12, 4), (30, 4)]}
    w = errors_by_event(series(totals, [(10, CONTROLLER_DELETION, 1), (20, "scale", 1)]))
    [block] = _share_after("traefik [r1]", w, CONTROLLER_DELETION, "a controller pod deletion")
    assert block.text == ("traefik [r1]: 3 of 4 errors (75 %) followed a controller pod deletion, counted until "
                          "the next event (errors by event, under Over time)."), block.text
    assert _share_after("r", errors_by_event(series({"read": [(0, 0), (9, 0)]}, [])), CONTROLLER_DELETION, "x") == []

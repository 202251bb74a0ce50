"""benchreport.timeline: each error and latency outlier attributed to the nearest event before it
within the window W, or to "no event", from tables of synthetic series; the report's sentence; the
window's setting. A mutation of W or of the nearest rule turns these red (test_mutations_turn_red)."""
import pytest

from benchreport import timeline
from benchreport.timeline import attribute, nearest, outlier_steps, parse_window, rises, sentence

# (case, events [(t, kind, n)], errors {class: [(t, n)]}, W, {kind: errors_total}, unattributed)
CASES = [
    ("an error 1 s after a podkill is that podkill's", [(10, "podkill", 1)], {"timeout": [(11, 3)]}, 2,
     {"podkill": 3}, 0),
    ("an error 5 s after it with W=2 s is no event's", [(10, "podkill", 1)], {"timeout": [(15, 3)]}, 2,
     {"podkill": 0}, 3),
    ("an error exactly W after the event is its", [(10, "podkill", 1)], {"timeout": [(12, 3)]}, 2,
     {"podkill": 3}, 0),
    ("an error just past W is no event's", [(10, "podkill", 1)], {"timeout": [(12.5, 3)]}, 2,
     {"podkill": 0}, 3),
    ("two events: the nearest preceding one", [(10, "scale", 1), (11, "podkill", 1)], {"http_5xx": [(12, 2)]}, 2,
     {"scale": 0, "podkill": 2}, 0),
    ("an event after the error is not its cause", [(10, "scale", 1), (13, "podkill", 1)], {"http_5xx": [(12, 2)]}, 5,
     {"scale": 2, "podkill": 0}, 0),
    ("an error at the event's own step is its", [(10, "controller_podkill", 1)], {"connection": [(10, 4)]}, 2,
     {"controller_podkill": 4}, 0),
    ("errors before any event are no event's", [(10, "scale", 1)], {"read": [(4, 1), (11, 2)]}, 2,
     {"scale": 2}, 1),
]


@pytest.mark.parametrize("case,events,errors,window,by_kind,rest", CASES, ids=[c[0] for c in CASES])
def test_errors_go_to_the_nearest_preceding_event_within_w(case, events, errors, window, by_kind, rest):
    a = attribute(events, errors, [], window)
    assert {k: b["errors_total"] for k, b in a["events"].items()} == by_kind, a
    assert a["unattributed"]["errors_total"] == rest, a
    assert a["errors_total"] == sum(by_kind.values()) + rest and a["window_s"] == window


def test_shares_and_classes():
    a = attribute([(10, "podkill", 2)], {"timeout": [(11, 3), (30, 1)], "http_5xx": [(12, 1)]}, [], 2.5)
    b = a["events"]["podkill"]
    assert (b["events"], b["errors"], b["errors_total"], b["share"]) == (2, {"timeout": 3, "http_5xx": 1}, 4, 0.8)
    assert a["unattributed"] == {"errors": {"timeout": 1}, "errors_total": 1, "latency_outliers": 0, "share": 0.2}
    assert a["timeline"] == [{"t_s": 10, "kind": "podkill", "events": 2, "errors": {"timeout": 3, "http_5xx": 1},
                              "errors_total": 4, "latency_outliers": 0}]


def test_each_mark_gets_its_own_errors():
    a = attribute([(10, "dataplane_scale", 1), (20, "dataplane_scale", 1)],
                  {"http_5xx": [(11, 2), (21, 5)]}, [], 2)
    assert [m["errors_total"] for m in a["timeline"]] == [2, 5] and a["events"]["dataplane_scale"]["events"] == 2


def test_outliers_likewise():
    # a steady 10 ms p99 with two spikes: at 11 s (1 s after the podkill) and at 40 s (no event near)
    p99 = [(t, 10.0) for t in range(0, 60)]
    p99[11], p99[40] = (11, 90.0), (40, 50.0)
    found = outlier_steps(p99)
    assert found == [(11, 90.0), (40, 50.0)]
    a = attribute([(10, "podkill", 1)], {}, found, 2)
    assert (a["events"]["podkill"]["latency_outliers"], a["unattributed"]["latency_outliers"]) == (1, 1)
    assert a["latency_outliers"] == 2 and a["events"]["podkill"]["share"] is None


def test_an_outlier_is_over_the_factor_times_the_median():
    assert outlier_steps([(0, 10), (1, 10), (2, 29)]) == [] and outlier_steps([(0, 10), (1, 10), (2, 31)]) == [(2, 31)]
    assert outlier_steps([]) == []


def test_rises_of_a_counter_and_its_resets():
    assert rises([(0, 0), (1, 0), (2, 3), (3, 3), (4, 5), (5, 1), (6, 2)]) == [(2, 3), (4, 2), (6, 1)]
    # k6's counters start at 0 in the run: errors in its first push are a rise at the first point; a
    # controller's counter counts since it started: its first point is no event
    assert rises([(0, 2), (1, 3)]) == [(0, 2), (1, 1)] and rises([(0, 2), (1, 3)], from_zero=False) == [(1, 1)]


def test_the_report_sentence():
    a = attribute([(10, "controller_podkill", 1), (20, "scale", 1)],
                  {"connection": [(11, 3), (40, 1)]}, [], 2)
    assert sentence("traefik [r1]", a) == ("traefik [r1]: 75 % of errors (3 of 4) within 2 s of a controller pod "
                                           "deletion."), sentence("traefik [r1]", a)
    assert sentence("r", attribute([(1, "scale", 1)], {}, [], 2)) is None
    assert sentence("r", attribute([(1, "scale", 1)], {"read": [(30, 2)]}, [], 2)) == (
        "r: none of its 2 errors within 2 s of an event (scale).")


def test_a_new_churn_action_is_a_kind_without_a_change():
    a = attribute([(5, "backend_failover", 1)], {"http_5xx": [(6, 1)]}, [], 2)
    assert a["events"]["backend_failover"]["errors_total"] == 1
    assert timeline.words("backend_failover") == "a backend_failover event"


def test_the_default_window_is_2_s_plus_the_resolution():
    # the longer of a query step and k6's push interval (5 s)
    assert timeline.attribution_window(None, 1) == 7 and timeline.attribution_window(None, 9) == 11
    assert timeline.attribution_window(1.5, 3) == 1.5


@pytest.mark.parametrize("text,seconds", [("2s", 2), ("1500ms", 1.5), ("1m", 60)])
def test_window_setting(text, seconds):
    assert parse_window(text) == seconds


@pytest.mark.parametrize("text", ["0s", "2", "-1s", "11m", "soon"])
def test_bad_window_is_refused_naming_it(text):
    with pytest.raises(ValueError, match="^'%s' is not a .*(duration|window)" % text.replace("-", r"\-")):
        parse_window(text)


def test_reload_counter_per_preset_controller():
    assert timeline.reload_metric("traefik") == "traefik_config_reloads_total"
    assert timeline.reload_metric("static") is None


def test_mutations_turn_red(monkeypatch):
    """Without the window (any earlier event) or with the latest event replaced by the first, the
    table's cases fail."""
    def first_not_nearest(events, t, window_s):
        return next((i for i, (te, _, _) in enumerate(events) if te <= t and t - te <= window_s), None)

    def no_window(events, t, window_s):
        return nearest(events, t, float("inf"))

    for mutant in (first_not_nearest, no_window):
        monkeypatch.setattr(timeline, "nearest", mutant)
        failed = 0
        for _, events, errors, window, by_kind, rest in CASES:
            a = timeline.attribute(events, errors, [], window)
            failed += ({k: b["errors_total"] for k, b in a["events"].items()} != by_kind)
        assert failed, mutant.__name__


# ---- long-lived's stream breaks: the same rule, counted apart from the errors ----

def test_stream_breaks_go_to_the_nearest_event_counted_apart():
    a = attribute([(10, "controller_podkill", 1), (20, "stream_scale", 1)], {"http_5xx": [(11, 4)]}, [], 2,
                  breaks={"reset": [(11, 3), (40, 1)], "backend_stop": [(21, 2)]})
    kill, scale, rest = a["events"]["controller_podkill"], a["events"]["stream_scale"], a["unattributed"]
    assert (kill["streams_broken"], kill["streams_broken_total"], kill["streams_share"]) == ({"reset": 3}, 3, 0.5)
    assert (scale["streams_broken"], scale["streams_share"]) == ({"backend_stop": 2}, 0.3333)
    assert (rest["streams_broken"], rest["streams_broken_total"]) == ({"reset": 1}, 1)
    # the errors are unchanged by the breaks: 4 of 4 to the deletion
    assert (a["errors_total"], kill["errors_total"], kill["share"], scale["share"]) == (4, 4, 1.0, 0.0)
    assert a["streams_broken_total"] == 6
    assert [(m["kind"], m["streams_broken_total"]) for m in a["timeline"]] == [("controller_podkill", 3),
                                                                               ("stream_scale", 2)]


def test_no_break_keys_for_a_run_without_breaks():
    a = attribute([(10, "scale", 1)], {"read": [(11, 1)]}, [], 2)
    assert "streams_broken_total" not in a and "streams_broken" not in a["events"]["scale"], a
    assert "streams_share" not in a["unattributed"] and "streams_broken" not in a["timeline"][0], a
    # breaks={}: a series without a rise, every count 0 and no share
    b = attribute([(10, "scale", 1)], {}, [], 2, breaks={})
    assert (b["streams_broken_total"], b["events"]["scale"]["streams_share"]) == (0, None)


def test_the_report_sentence_of_breaks():
    a = attribute([(10, "reload_route_created", 1), (30, "controller_podkill", 1)], {}, [], 2,
                  breaks={"reset": [(11, 1), (31, 3)]})
    assert sentence("traefik", a, "breaks") == ("traefik: 75 % of stream breaks (3 of 4) within 2 s of a "
                                                "controller pod deletion."), sentence("traefik", a, "breaks")
    assert sentence("traefik", a) is None  # no errors: no error sentence
    assert sentence("r", attribute([(1, "stream_scale", 1)], {}, [], 2, breaks={"reset": [(30, 2)]}),
                    "breaks") == "r: none of its 2 stream breaks within 2 s of an event (stream_scale)."


def test_sections_with_and_without_breaks_are_valid_attribution():
    """Both shapes against the contract's schema for the summary's attribution section."""
    jsonschema = pytest.importorskip("jsonschema")
    import json
    import pathlib
    schema = json.loads((pathlib.Path(__file__).resolve().parents[3] / "scenarios/contract.json").read_text())
    schema = schema["summarySchema"]
    section = {"$ref": "#/properties/attribution", **{k: schema[k] for k in ("$defs", "properties")}}
    validator = jsonschema.Draft202012Validator(section)
    for breaks in (None, {"reset": [(11, 3)], "backend_stop": [(12, 1)]}):
        a = attribute([(10, "controller_podkill", 1)], {"http_5xx": [(11, 4)]}, [], 2, breaks=breaks)
        assert not list(validator.iter_errors(a)), (breaks, [e.message for e in validator.iter_errors(a)])
    a["events"]["controller_podkill"]["streams_share"] = 2
    assert list(validator.iter_errors(a)), "a share over 1 must not validate"

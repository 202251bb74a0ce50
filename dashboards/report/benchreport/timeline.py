"""One timeline of a run's events, and every error and latency outlier attributed to the nearest
event before it within a window W, or to "no event". Used by `make results` (the merged summary's
`attribution` section) and the report (its sentence per churn run and its table); the run-overview
dashboard's row draws the same rule in PromQL.

Events: the runner's churn actions (k6_bench_scale_events_total{action}, one kind per action, so a
new experiment's action is a new kind without a change here), the route experiments' changes and
creations, and the controller's own configuration reloads or pushes where its preset's controller
exposes a counter (CONTROLLER_RELOADS; those series carry no run id: every instance Prometheus scrapes).
Errors: the load's error counters (k6_bench_errors_total, by class), a rise between two query steps.
Stream breaks (long-lived): the same rule for its counter of streams ended before their time (by
cause), kept apart from the errors: a break is a stream, not a request, and its share is of breaks.
Latency outlier: a query step whose p99 request duration (the k6 native histogram) is over
OUTLIER_FACTOR x the run's median step p99. The median of the steps is the run's usual tail and
moves little with the few spikes it is there to find (a whole-run p99 would include them); a step
is the finest time Prometheus resolves, so an outlier is a step, not a request.
Prometheus sees a counter rise at the sample after it: k6 stamps its samples at each push (every
K6_PUSH_INTERVAL_S by default), so an error pushed one push after its event is that much later on the
timeline. The default window is ATTRIBUTION_WINDOW_S plus that resolution: the longer of one query
step and one push interval.
This replaces the report's former errors by event, the run cut at each event and every error given
to the last event before it however long ago: a run's steady errors went to its last scale step. A
window says which errors an event can have caused, and leaves the rest to no event."""

from .prometheus import selector
from .summary import CONTRACT, prometheus_name

NO_EVENT = "no event"
# The window, push interval, outlier factor and event sources: scenarios/contract.json
# eventAttribution, which the run overview's row reads too.
_SETTINGS = CONTRACT["eventAttribution"]
# The default window W: a pod deletion's errors come within about a second or two of it; the
# timeline's resolution is added at run time (attribution_window).
ATTRIBUTION_WINDOW_S = float(_SETTINGS["windowS"])
# k6's remote-write push interval by default (K6_PROMETHEUS_RW_PUSH_INTERVAL, which the chart leaves).
K6_PUSH_INTERVAL_S = float(_SETTINGS["pushIntervalS"])
# A step's p99 this many times the run's median step p99 is an outlier.
OUTLIER_FACTOR = float(_SETTINGS["outlierFactor"])
# The runner's churn actions: every value of its action label is an event kind of that name.
SCALE_EVENTS = "k6_bench_scale_events_total"
# Other event sources: (kind, counter, what a sentence calls one), from the contract. A new churn
# action needs no row (its kind is its action, its words from EVENT_WORDS or its name).
EVENT_SOURCES = [(s["kind"], s["metric"], s["words"]) for s in _SETTINGS["sources"]]
# What the report's sentence calls one event of a churn action.
EVENT_WORDS = {
    "scale": "a backend scale step",
    "rollout": "a rollout step",
    "podkill": "a backend pod deletion",
    "controller_podkill": "a controller pod deletion",
    "dataplane_scale": "a data-plane scale step",
    "controller_reload": "a controller reload",
    "controller_rollout": "the controller's rollout update",
    "controller_pod_terminating": "an old controller pod terminating",
    "controller_pod_ready": "a new controller pod Ready",
    "backend_unhealthy": "the flapping backend pod turning unhealthy",
    "backend_healthy": "the flapping backend pod healthy again",
    "stream_scale": "a stream backend scale step",
    "reload_route_created": "the reload route's creation",
    "reload_route_deleted": "the reload route's deletion",
}
# The controller's own counter of configuration reloads or pushes, per preset `controller:` value
# (scenarios/contract.json controllerReloads, which the controller dashboard's probe list reads too).
CONTROLLER_RELOADS = {r["controller"]: r["metric"] for r in CONTRACT["controllerReloads"]["list"]}
RELOAD_KIND = "controller_reload"
# long-lived's stream breaks, attributed like the errors but counted apart (contract eventAttribution
# breaks: the k6 metric and the label that splits it)
BREAKS = _SETTINGS["breaks"]
BREAKS_METRIC, BREAKS_BY = prometheus_name(BREAKS["metric"]), BREAKS["by"]


def words(kind):
    """What a sentence calls one event of `kind`."""
    sources = {k: w for k, _, w in EVENT_SOURCES}
    return EVENT_WORDS.get(kind) or sources.get(kind) or f"a {kind} event"


def reload_metric(controller):
    """The controller's reload counter, or None when its preset names none."""
    return CONTROLLER_RELOADS.get(controller)


def attribution_window(window_s, step):
    """W in seconds: the given window, else ATTRIBUTION_WINDOW_S plus the longer of one query step and
    one push interval."""
    if window_s is not None:
        return window_s
    return ATTRIBUTION_WINDOW_S + max(step, K6_PUSH_INTERVAL_S)


def parse_window(text):
    """--attribution-window's value in seconds, or ValueError naming it and what is allowed (cli.py
    puts the option's name before the message)."""
    from .duration import DurationError, parse_duration
    try:
        seconds = float(parse_duration(text, "s"))
    except DurationError as e:
        raise ValueError(str(e)) from e
    if not 0 < seconds <= 600:
        raise ValueError(f"{text!r} is not a window: expected a duration above 0 and at most 10m, e.g. 2s or 1500ms")
    return seconds


def rises(points, from_zero=True):
    """[(t, n)] of a cumulative counter's points [(t, value)]: each rise since the point before it
    (a drop is a reset: counting starts again from its value). from_zero: the counter started at 0
    in the run (k6's), so its first point is a rise from 0; else (a controller's, counting since it
    started) the first point is where counting starts."""
    out, previous = [], 0.0 if from_zero else None
    for t, v in points:
        if previous is not None and v > previous:
            out.append((t, v - previous))
        previous = v
    return out


def outlier_steps(p99_points, factor=OUTLIER_FACTOR):
    """[(t, p99)] of the steps whose p99 is over factor x the median step p99."""
    values = sorted(v for _, v in p99_points)
    if not values:
        return []
    mid = len(values) // 2
    median = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
    return [(t, v) for t, v in p99_points if v > factor * median]


def nearest(events, t, window_s):
    """The index of the latest event at or before t and at most window_s before it, or None.
    events: [(t, kind, n)] sorted by time."""
    found = None
    for i, (te, _, _) in enumerate(events):
        if te > t:
            break
        if t - te <= window_s:
            found = i
    return found


def attribute(events, errors, outliers, window_s, breaks=None):
    """The attribution section: {"window_s", "events": {kind: {"events", "errors": {class: n},
    "errors_total", "share", "latency_outliers"}}, "unattributed": {the same but events},
    "errors_total", "latency_outliers", "timeline": [per event mark: "t_s", "kind" and the same]}.
    events [(t, kind, n)] (seconds since the start), errors {class: [(t, n)]}, outliers [(t, p99)].
    breaks {cause: [(t, n)]}: streams broken, when the run had any; then every bucket and mark also
    has "streams_broken" {cause: n} and "streams_broken_total", and the section "streams_broken_total"
    (each bucket's "streams_share" is of all breaks)."""
    events = sorted(events)
    marks = [dict(_bucket(n), t_s=round(t, 1), kind=kind) for t, kind, n in events]
    rest = _bucket(0)

    def bucket(t):
        i = nearest(events, t, window_s)
        return rest if i is None else marks[i]

    counted = [("errors", "errors_total", errors), ("streams_broken", "streams_broken_total", breaks or {})]
    for by, total, rows_by in counted:
        for cls, rows in sorted(rows_by.items()):
            for t, n in rows:
                b = bucket(t)
                b[by][cls] = b[by].get(cls, 0) + n
                b[total] += n
    for t, _ in outliers:
        bucket(t)["latency_outliers"] += 1
    kinds = {}
    for m in marks:
        k = kinds.setdefault(m["kind"], _bucket(0))
        for key in ("events", "latency_outliers") + tuple(total for _, total, _ in counted):
            k[key] += m[key]
        for by, _, _ in counted:
            for c, n in m[by].items():
                k[by][c] = k[by].get(c, 0) + n
    section = {"window_s": round(window_s, 3)}
    for by, total, _ in counted:
        section[total] = _shares(list(kinds.values()) + [rest], marks, by, total,
                                 "share" if by == "errors" else "streams_share")
    del rest["events"]
    section.update(events=dict(sorted(kinds.items())), unattributed=rest, latency_outliers=len(outliers))
    keys = ["t_s", "kind", "events", "errors", "errors_total", "latency_outliers"]
    if breaks is None:
        for b in marks + list(kinds.values()) + [rest]:
            for key in ("streams_broken", "streams_broken_total", "streams_share"):
                b.pop(key, None)
        del section["streams_broken_total"]
    else:
        keys += ["streams_broken", "streams_broken_total"]
    section["timeline"] = [{k: m[k] for k in keys} for m in marks]
    return section


def _shares(buckets, marks, by, total_key, share_key):
    """Rounds the counts of `by` in every bucket and mark, sets each bucket's share of their total;
    the total."""
    total = sum(b[total_key] for b in buckets)
    for b in marks + buckets:
        b[total_key] = round(b[total_key])
        b[by] = {c: round(n) for c, n in b[by].items()}
    for b in buckets:
        b[share_key] = round(b[total_key] / total, 4) if total else None
    return round(total)


def _bucket(events):
    return {"events": events, "errors": {}, "errors_total": 0, "latency_outliers": 0,
            "streams_broken": {}, "streams_broken_total": 0}


def attribution_of(run, series):
    """The run's section: recomputed from its Prometheus series when the report has them, else the
    one its summary carries ({} for neither)."""
    ts = series.get(run.testid)
    return (ts.attribution if ts else None) or run.attribution


def fetch(prom, testid, start, end, step, controller=None):
    """(events, errors, outliers, breaks) of run testid between start and end (seconds since the epoch),
    one query step apart; times in seconds since start. Range queries end one step past the end, so
    a rise in the last step is kept."""
    sel, load = selector(testid, measured=True), selector(testid, load_only=True)

    def series(query, label=None):
        out = {}
        for r in prom.query_range(query, start, end + step, step):
            key = r["metric"].get(label, "unknown") if label else None
            out[key] = [(float(t) - start, float(v)) for t, v in r["values"] if float(v) == float(v)]
        return out

    events = [(t, action, n) for action, pts in series(f"sum by (action) ({SCALE_EVENTS}{sel})", "action").items()
              for t, n in rises(pts)]
    for kind, metric, _ in EVENT_SOURCES:
        events += [(t, kind, n) for pts in series(f"sum({metric}{sel})").values() for t, n in rises(pts)]
    metric = reload_metric(controller)
    if metric:
        # the controller's own series carry no testid: every instance Prometheus scrapes in the run
        events += [(t, RELOAD_KIND, n) for pts in series(f"sum({metric})").values()
                   for t, n in rises(pts, from_zero=False)]
    errors = {cls: rises(pts) for cls, pts in series(f"sum by (class) (k6_bench_errors_total{load})", "class").items()}
    window = f"{int(max(15, 3 * step))}s"  # as the report's charts: a rate needs a few pushes in its window
    p99 = series(f"histogram_quantile(0.99, sum(rate(k6_http_req_duration_seconds{load}[{window}])))")
    # k6 creates the counter on a run's first break: None (no streams_broken keys) for a run without
    breaks = {cause: rises(pts) for cause, pts in
              series(f"sum by ({BREAKS_BY}) ({BREAKS_METRIC}{sel})", BREAKS_BY).items()} or None
    return sorted(events), errors, outlier_steps(next(iter(p99.values()), [])), breaks


def run_attribution(prom, testid, start, end, step, controller=None, window_s=None):
    """The attribution section of run testid, from Prometheus."""
    events, errors, outliers, breaks = fetch(prom, testid, start, end, step, controller)
    return attribute(events, errors, outliers, attribution_window(window_s, step), breaks)


# what a sentence counts: its noun, and the section's total and share keys
COUNTED = {"errors": ("errors", "errors_total", "share"),
           "breaks": ("stream breaks", "streams_broken_total", "streams_share")}


def sentence(label, section, counted="errors"):
    """'label: 83 % of errors within 2 s of a controller pod deletion' for the kind with most errors,
    or None when the run had no errors or no event. counted="breaks": the same of its stream breaks."""
    noun, total, share = COUNTED[counted]
    if not section or not section.get(total) or not section["events"]:
        return None
    kind, b = max(section["events"].items(), key=lambda kv: kv[1][total])
    w = f"{section['window_s']:g}"
    if not b[total]:
        return (f"{label}: none of its {section[total]} {noun} within {w} s of an event "
                f"({', '.join(section['events'])}).")
    return (f"{label}: {100 * b[share]:.0f} % of {noun} ({b[total]} of {section[total]}) "
            f"within {w} s of {words(kind)}.")

"""One timeline of a run's events, and every error and latency outlier attributed to the nearest
event before it within a window W, or to "no event". Used by `make results` (the merged summary's
`attribution` section) and the report (its sentence per churn run and its table); the run-overview
dashboard's row draws the same rule in PromQL.

Events: the runner's churn actions (k6_bench_scale_events_total{action}, one kind per action, so a
new experiment's action is a new kind without a change here), the route experiments' changes, and
the controller's own configuration reloads or pushes where its preset's controller exposes a counter
(CONTROLLER_RELOADS, which the controller dashboard's probe list reads too).
Errors: the load's error counters (k6_bench_errors_total, by class), a rise between two query steps.
Latency outlier: a query step whose p99 request duration (the k6 native histogram) is over
OUTLIER_FACTOR x the run's median step p99. The median of the steps is the run's usual tail and
moves little with the few spikes it is there to find (a whole-run p99 would include them); a step
is the finest time Prometheus resolves, so an outlier is a step, not a request.
Prometheus sees a counter rise at the sample after it (k6 pushes every few seconds), so an error
and its event are a step apart at best: the default window is ATTRIBUTION_WINDOW plus one step."""

from .prometheus import selector

NO_EVENT = "no event"
# The default window W: a pod deletion's errors come within about a second or two of it; one query
# step is added at run time (attribution_window).
ATTRIBUTION_WINDOW = "2s"
# A step's p99 this many times the run's median step p99 is an outlier.
OUTLIER_FACTOR = 3.0
# The runner's churn actions: every value of its action label is an event kind of that name.
SCALE_EVENTS = "k6_bench_scale_events_total"
# Other event sources, a row each: (kind, counter, what a sentence calls one). Add a row for a new
# source; a new churn action needs none (its kind is its action, its words from EVENT_WORDS or its name).
EVENT_SOURCES = [
    ("route_change", "k6_bench_route_changes_total", "a route change"),
    ("route_create", "k6_bench_routes_created_total", "a route creation"),
]
# What the report's sentence calls one event of a churn action.
EVENT_WORDS = {
    "scale": "a backend scale step",
    "rollout": "a rollout step",
    "podkill": "a backend pod deletion",
    "controller_podkill": "a controller pod deletion",
    "dataplane_scale": "a data-plane scale step",
    "controller_reload": "a controller reload",
}
# The controller's own counter of configuration reloads or pushes, per preset `controller:` value:
# (preset, the controller dashboard's name for it, counter). Its one statement: benchdashboards'
# controllers.py builds its probe list from it.
CONTROLLER_RELOADS = [
    ("traefik", "traefik", "traefik_config_reloads_total"),
    ("ingress-nginx", "ingress-nginx", "nginx_ingress_controller_success"),
    ("nginx-inc", "nginx-ingress (F5 NGINX)", "nginx_ingress_controller_nginx_reloads_total"),
    ("haproxy", "haproxy (haproxytech)", "haproxy_reloads_total"),
    ("envoy-gateway", "envoy-gateway", "xds_snapshot_update_total"),
    ("nginx-gateway-fabric", "nginx-gateway-fabric", "nginx_gateway_fabric_event_batch_processing_milliseconds_count"),
    ("istio", "istio", "pilot_xds_pushes"),
]
RELOAD_KIND = "controller_reload"


def words(kind):
    """What a sentence calls one event of `kind`."""
    sources = {k: w for k, _, w in EVENT_SOURCES}
    return EVENT_WORDS.get(kind) or sources.get(kind) or f"a {kind} event"


def reload_metric(controller):
    """The controller's reload counter, or None when its preset names none."""
    return next((m for c, _, m in CONTROLLER_RELOADS if c == controller), None)


def attribution_window(window_s, step):
    """W in seconds: the given window, else ATTRIBUTION_WINDOW plus one query step."""
    if window_s is not None:
        return window_s
    from .duration import parse_duration
    return parse_duration(ATTRIBUTION_WINDOW, "s") + step


def parse_window(text):
    """--attribution-window's value in seconds, or ValueError naming it and what is allowed."""
    from .duration import DurationError, parse_duration
    try:
        seconds = float(parse_duration(text, "s"))
    except DurationError as e:
        raise ValueError(f"--attribution-window {text!r}: {e}") from e
    if not 0 < seconds <= 600:
        raise ValueError(f"--attribution-window {text!r}: expected a duration above 0 and at most 10m, e.g. 2s or 1500ms")
    return seconds


def rises(points):
    """[(t, n)] of a cumulative counter's points [(t, value)]: each rise since the point before it
    (a drop is a reset: counting starts again from its value)."""
    out, previous = [], None
    for t, v in points:
        if previous is not None and v > previous:
            out.append((t, v - previous))
        elif previous is None and v > 0 and t > 0:
            out.append((t, v))
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
    """The kind of the latest event at or before t and at most window_s before it, or NO_EVENT.
    events: [(t, kind, n)] sorted by time."""
    kind = NO_EVENT
    for te, k, _ in events:
        if te > t:
            break
        if t - te <= window_s:
            kind = k
    return kind


def attribute(events, errors, outliers, window_s):
    """The attribution section: {"window_s", "events": {kind: {"events", "errors": {class: n},
    "errors_total", "share", "latency_outliers"}}, "unattributed": {...}, "errors_total",
    "latency_outliers"}. events [(t, kind, n)], errors {class: [(t, n)]}, outliers [(t, p99)]."""
    events = sorted(events)
    kinds = {}
    for _, kind, n in events:
        kinds.setdefault(kind, _bucket())["events"] += n
    rest = _bucket()
    for cls, rows in sorted(errors.items()):
        for t, n in rows:
            b = kinds.get(nearest(events, t, window_s), rest)
            b["errors"][cls] = b["errors"].get(cls, 0) + n
            b["errors_total"] += n
    for t, _ in outliers:
        kinds.get(nearest(events, t, window_s), rest)["latency_outliers"] += 1
    total = sum(b["errors_total"] for b in kinds.values()) + rest["errors_total"]
    for b in list(kinds.values()) + [rest]:
        b["errors_total"] = round(b["errors_total"])
        b["errors"] = {c: round(n) for c, n in b["errors"].items()}
        b["share"] = round(b["errors_total"] / total, 4) if total else None
    del rest["events"]
    return {"window_s": round(window_s, 3), "events": dict(sorted(kinds.items())), "unattributed": rest,
            "errors_total": round(total), "latency_outliers": len(outliers)}


def _bucket():
    return {"events": 0, "errors": {}, "errors_total": 0, "latency_outliers": 0}


def fetch(prom, testid, start, end, step, controller=None):
    """(events, errors, outliers) of run testid between start and end (seconds since the epoch),
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
        events += [(t, RELOAD_KIND, n) for pts in series(f"sum({metric})").values() for t, n in rises(pts)]
    errors = {cls: rises(pts) for cls, pts in series(f"sum by (class) (k6_bench_errors_total{load})", "class").items()}
    window = f"{int(max(15, 3 * step))}s"  # as the report's charts: a rate needs a few pushes in its window
    p99 = series(f"histogram_quantile(0.99, sum(rate(k6_http_req_duration_seconds{load}[{window}])))")
    return sorted(events), errors, outlier_steps(next(iter(p99.values()), []))


def run_attribution(prom, testid, start, end, step, controller=None, window_s=None):
    """The attribution section of run testid, from Prometheus."""
    events, errors, outliers = fetch(prom, testid, start, end, step, controller)
    return attribute(events, errors, outliers, attribution_window(window_s, step))


def sentence(label, section):
    """'label: 83 % of errors within 2 s of a controller pod deletion' for the kind with most errors,
    or None when the run had no errors or no event."""
    if not section or not section.get("errors_total") or not section["events"]:
        return None
    kind, b = max(section["events"].items(), key=lambda kv: kv[1]["errors_total"])
    w = f"{section['window_s']:g}"
    if not b["errors_total"]:
        return (f"{label}: none of its {section['errors_total']} errors within {w} s of an event "
                f"({', '.join(section['events'])}).")
    return (f"{label}: {100 * b['share']:.0f} % of errors ({b['errors_total']} of {section['errors_total']}) "
            f"within {w} s of {words(kind)}.")

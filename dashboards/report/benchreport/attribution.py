"""Which event each error followed: the run cut at its scale events (scale, rollout, podkill,
controller_podkill, dataplane_scale, or a churn function's own), and the errors of each class counted
from one event to the next, from the error counters in Prometheus (differences of samples, to the
resolution of the time series' step).
The window before the first event is the baseline: errors the churn did not cause."""

BASELINE = "before the first event"


def _at(points, t):
    """The cumulative count at time t: the last sample at or before t (0 before the first)."""
    value = 0.0
    for pt, v in points:
        if pt > t:
            break
        value = v
    return value


def errors_by_event(ts):
    """[{"from_s", "to_s", "action", "events", "errors": {class: n}, "total"}], one window before the
    first event and one from each event to the next (the last to the end of the run); [] without
    error counters."""
    if not ts or not ts.error_totals:
        return []
    end = max((pts[-1][0] for pts in ts.error_totals.values() if pts), default=0.0)
    cuts = [(0.0, BASELINE, None)] + [(t, action, n) for t, action, n in ts.scale_events]
    windows = []
    for i, (start, action, n) in enumerate(cuts):
        stop = cuts[i + 1][0] if i + 1 < len(cuts) else end
        # the baseline starts before the first sample: count from zero
        errors = {cls: round(_at(pts, stop) - (_at(pts, start) if i else 0.0))
                  for cls, pts in sorted(ts.error_totals.items())}
        windows.append({"from_s": round(start, 1), "to_s": round(stop, 1), "action": action, "events": n,
                        "errors": {c: e for c, e in errors.items() if e}, "total": sum(errors.values())})
    return windows

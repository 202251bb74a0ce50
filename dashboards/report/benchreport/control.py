"""The controller's own share of the latency: the same experiment through the controller and
direct to the backend pods (path `pod`, the control), subtracted percentile by percentile.

A merged run's percentiles are exact to one native-histogram bucket (merge.percentile_max_error_pct,
about 9 %); a runner's own summary is exact. The error of a difference is the sum of both sides'
worst cases, stated beside every figure."""

from .summary import PERCENTILES


def _error_ms(run, key):
    value = run.latency_ms.get(key)
    return (value or 0) * (run.percentile_error_pct or 0) / 100


def added_latency(runs, direct):
    """{label: {percentile: {"through_ms", "direct_ms", "added_ms", "error_ms"}}} for every whole run
    other than `direct` (the control run)."""
    out = {}
    for r in runs:
        if r is direct or r.path_name:
            continue
        rows = {}
        for p in PERCENTILES:
            through, control = r.latency_ms.get(p), direct.latency_ms.get(p)
            rows[p] = {"through_ms": through, "direct_ms": control,
                       "added_ms": None if through is None or control is None else round(through - control, 3),
                       "error_ms": round(_error_ms(r, p) + _error_ms(direct, p), 3)}
        out[r.label] = rows
    return out


def find_direct(runs, testid):
    """The control run named by its run id, or a ValueError naming what there is."""
    for r in runs:
        if r.testid == testid and not r.path_name:
            return r
    raise ValueError(f"--direct {testid!r} is not the run id of any summary given; run ids: "
                     + ", ".join(sorted({r.testid for r in runs})))

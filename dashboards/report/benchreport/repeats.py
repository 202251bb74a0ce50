"""Repeated runs of one experiment (a series: the matrix runner's --repeats): each figure as the
median across repeats with a 95 % confidence interval and the coefficient of variation, and two
series compared figure by figure.

Method, stated in the report: the interval is a percentile bootstrap over runs (10,000 resamples of
the repeats with replacement, a fixed seed so a report is reproducible); a comparison bootstraps
the difference of the two medians the same way and calls the series different only when that
interval excludes zero. Otherwise it is inconclusive, with an estimate of the repeats per series
that would resolve the observed difference (normal approximation, 95 % confidence, 80 % power).
Python standard library only: the figures are few (one per run), the resamples cheap."""

import math
import random
import statistics
from dataclasses import dataclass

RESAMPLES = 10_000
CONFIDENCE = 0.95
SEED = 20261127
MIN_REPEATS = 3  # fewer runs than this give no interval worth printing
Z_CONFIDENCE, Z_POWER = 1.96, 0.8416  # two-sided 95 %, 80 % power

# The figures compared across repeats: (name, unit, how to read it from a Run).
FIGURES = [
    ("rate_achieved", "req/s", lambda r: r.requests.get("rate_achieved")),
    ("p50", "ms", lambda r: r.latency_ms.get("p50")),
    ("p99", "ms", lambda r: r.latency_ms.get("p99")),
    ("p99.9", "ms", lambda r: r.latency_ms.get("p99.9")),
    ("errors %", "%", lambda r: 100.0 * r.total_errors / r.total_requests if r.total_requests else None),
    ("dropped_iterations", "", lambda r: r.requests.get("dropped_iterations")),
]


@dataclass
class Estimate:
    n: int
    median: float
    low: float = None   # the interval; None below MIN_REPEATS
    high: float = None
    cv: float = None    # sample standard deviation / mean; None below 2 runs or with mean 0


@dataclass
class Comparison:
    figure: str
    difference: float   # median of the other series minus median of the baseline
    low: float = None
    high: float = None
    verdict: str = ""   # "different", "inconclusive" or "too few repeats"
    repeats_needed: int = None  # for "inconclusive": per series, to resolve the observed difference


def _quantile(sorted_values, q):
    """Linear interpolation between order statistics (the 'inclusive' definition)."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _bootstrap(values_a, values_b=None, seed=SEED):
    """Sorted bootstrap medians of values_a, or of (median b - median a) with values_b."""
    rng = random.Random(seed)
    out = []
    for _ in range(RESAMPLES):
        m_a = statistics.median(rng.choices(values_a, k=len(values_a)))
        if values_b is None:
            out.append(m_a)
        else:
            out.append(statistics.median(rng.choices(values_b, k=len(values_b))) - m_a)
    out.sort()
    return out


def estimate(values):
    """Median, 95 % bootstrap interval and coefficient of variation of one figure over repeats."""
    values = [float(v) for v in values if v is not None]
    if not values:
        return None
    e = Estimate(n=len(values), median=statistics.median(values))
    if len(values) >= 2:
        mean = statistics.fmean(values)
        e.cv = statistics.stdev(values) / mean if mean else None
    if len(values) >= MIN_REPEATS:
        boot = _bootstrap(values)
        e.low, e.high = _quantile(boot, (1 - CONFIDENCE) / 2), _quantile(boot, (1 + CONFIDENCE) / 2)
    return e


def repeats_needed(values_a, values_b):
    """Runs per series for a two-sided 95 % test with 80 % power to see the observed difference of
    means, from the pooled standard deviation (None when there is no difference to resolve)."""
    diff = abs(statistics.fmean(values_b) - statistics.fmean(values_a))
    pooled = math.sqrt((statistics.variance(values_a) + statistics.variance(values_b)) / 2)
    if diff == 0:
        return None
    return max(MIN_REPEATS, math.ceil(2 * ((Z_CONFIDENCE + Z_POWER) * pooled / diff) ** 2))


def compare(figure, values_a, values_b):
    """Series b against baseline series a for one figure."""
    a = [float(v) for v in values_a if v is not None]
    b = [float(v) for v in values_b if v is not None]
    if len(a) < MIN_REPEATS or len(b) < MIN_REPEATS:
        diff = statistics.median(b) - statistics.median(a) if a and b else None
        return Comparison(figure, diff, verdict="too few repeats")
    boot = _bootstrap(a, b)
    c = Comparison(figure, statistics.median(b) - statistics.median(a),
                   _quantile(boot, (1 - CONFIDENCE) / 2), _quantile(boot, (1 + CONFIDENCE) / 2))
    if c.low > 0 or c.high < 0:
        c.verdict = "different"
    else:
        c.verdict = "inconclusive"
        c.repeats_needed = repeats_needed(a, b)
    return c


def group(runs):
    """{series id: [Run, ...] in repeat order} for the whole runs that belong to a series."""
    series = {}
    for r in runs:
        if r.series_id and not r.path_name:
            series.setdefault(r.series_id, []).append(r)
    for members in series.values():
        members.sort(key=lambda r: (r.repeat or 0, r.testid))
    return series


def figures_of(members):
    """{figure: [value per repeat]} of one series."""
    return {name: [read(r) for r in members] for name, _unit, read in FIGURES}


def summarize(runs):
    """report.json's `series`: per series its runs, each figure's estimate and, for every series
    after the first, the comparison with the first; {} without repeats."""
    series = group(runs)
    if not any(len(m) > 1 for m in series.values()):
        return {}
    figures = {sid: figures_of(members) for sid, members in series.items()}
    baseline = next(iter(series))
    out = {}
    for sid, members in series.items():
        entry = {"runs": [r.testid for r in members], "figures": {}}
        for name, _unit, _read in FIGURES:
            e = estimate(figures[sid][name])
            entry["figures"][name] = None if e is None else {
                "median": e.median, "low": e.low, "high": e.high, "cv": e.cv, "n": e.n}
        if sid != baseline:
            entry["against"] = baseline
            entry["comparison"] = {name: vars(compare(name, figures[baseline][name], figures[sid][name]))
                                   for name, _unit, _read in FIGURES}
        out[sid] = entry
    return out

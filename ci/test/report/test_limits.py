"""The figures that decide a result, each with data at and just past its limit: the merge's counts
and step verdicts (from a small in-memory Prometheus that answers the merge's queries by their label
matchers), the report's budgets and warnings, and the repeats' interval. A comparison turned the
wrong way (<= to <), a limit moved or a wrong selector turns a case red (ci/tools/mutants.yaml)."""
import re

import pytest

from benchreport import repeats
from benchreport.merge import RunQueries, _counts, merge_parts
from benchreport.prometheus import selector
from benchreport.summary import ERROR_CLASSES, RATE_HELD_SHARE, RUNNER_LIMITS, Run
from benchreport.verdict import comparability_warnings, judge, parse_budgets

SELECTOR = re.compile(r"(\w+)\{([^}]*)\}")
MATCHER = re.compile(r'(\w+)(!=|=)"([^"]*)"')


class Series(RunQueries):
    """The merge's RunQueries over SERIES, [(metric, labels, value)]: a counter's value is its last
    sample; a native histogram's is {"count", "sum", quantile: seconds}, one series per group (the
    buckets of several are not added here). Each query's first selector picks the series; the query's
    outer function (sum, count, max, histogram_*) and its `by (...)` group them."""

    def __init__(self, series):
        super().__init__(None, "t", 0, 60)
        self.series = series

    def vector(self, query):
        metric, matchers = SELECTOR.search(query).groups()
        want = MATCHER.findall(matchers)
        rows = [(labels, v) for m, labels, v in self.series if m == metric
                and all((labels.get(k, "") == val) == (op == "=") for k, op, val in want)]
        by = re.search(r"by \(([^)]*)\)", query)
        keys = [k.strip() for k in by.group(1).split(",")] if by else []
        groups = {}
        for labels, v in rows:
            groups.setdefault(tuple(labels.get(k, "") for k in keys), []).append(v)
        out = []
        for key, values in groups.items():
            if query.startswith("histogram_"):
                assert len(values) == 1, f"one histogram per group: {query}"
                h = values[0]
                fn = re.match(r"histogram_(\w+)\(([\d.]+)?", query)
                if fn.group(1) in ("count", "sum"):
                    v = h[fn.group(1)]
                else:  # the quantile the histogram states nearest the one asked (0.999 is 0.9990000000000001)
                    v = h[min((k for k in h if not isinstance(k, str)), key=lambda k: abs(k - float(fn.group(2))))]
            elif query.startswith("count"):
                v = len(values)
            elif query.startswith("max"):
                v = max(values)
            else:
                v = sum(values)
            out.append({"metric": dict(zip(keys, key)), "value": [61, str(v)]})
        return out


LOAD, RUN, LAG = selector("t", load_only=True), selector("t", measured=True), selector("t", role="lag")


def requests(scenario, total, role="load", **tags):
    return ("k6_http_reqs_total", {"testid": "t", "role": role, "scenario": scenario, **tags}, total)


def dropped(scenario, n):
    # k6 tags dropped iterations with the run's tags and the scenario's name only (no role, no part)
    return ("k6_dropped_iterations_total", {"testid": "t", "scenario": scenario}, n)


# ---- the run's counts ----

def test_dropped_iterations_are_counted_from_series_without_a_role():
    q = Series([requests("default", 1000), dropped("default", 7), dropped("warmup", 5),
                ("k6_bench_errors_total", {"testid": "t", "role": "load", "class": "read", "cause": "eof"}, 3)])
    c = _counts(q, LOAD, RUN, [])
    # the warm-up's drops are in no figure
    assert (c["total"], c["dropped"], c["errors"]["read"]) == (1000, 7, 3), c


# ---- max-rps steps (budget p99 50 ms, error ratio 0.001) and calibrate steps, merged ----

BUDGET = {"budget_p99_ms": "50", "budget_error_ratio": "0.001"}


def step(name, rate, total, p99_ms=10, errors=0, drops=0, budget=True, lag_p95=None):
    """The series of one 10 s step at RATE: its requests, errors (read), dropped iterations, latency
    histogram and, for a calibrate step, one runner's lag histogram."""
    tags = {"part": name, "part_kind": "step", "part_rate": str(rate), "part_ms": "10000", **(BUDGET if budget else {})}
    hist = {"count": total, "sum": total * 0.01, 0.5: 0.005, 0.9: 0.008, 0.95: 0.009, 0.99: p99_ms / 1000,
            0.999: p99_ms / 1000, 0.9999: p99_ms / 1000, 0: 0.001, 1: p99_ms / 1000}
    out = [requests(name, total, **tags), dropped(name, drops),
           ("k6_bench_errors_total", {"testid": "t", "role": "load", "scenario": name, "class": "read", "cause": "eof"},
            errors),
           ("k6_http_req_duration_seconds", {"testid": "t", "role": "load", "scenario": name}, hist)]
    if lag_p95 is not None:
        out.append(("k6_bench_runner_lag_seconds", {"testid": "t", "role": "lag", "step": name, "instance_id": "1"},
                    {0.95: lag_p95 / 1000, 0.99: lag_p95 / 1000}))
    return out


# (case, step series, held): rate 100/s for 10 s; RATE_HELD_SHARE of it is 950 requests
MAX_RPS = [
    ("exactly the held share of the rate", dict(total=950), True),
    ("one request short of it", dict(total=949), False),
    ("p99 at the budget", dict(total=1000, p99_ms=50), True),
    ("p99 just over it", dict(total=1000, p99_ms=50.01), False),
    ("error ratio at the budget", dict(total=1000, errors=1), True),
    ("error ratio just over it", dict(total=1000, errors=2), False),
    ("one dropped iteration", dict(total=1000, drops=1), False),
]


@pytest.mark.parametrize("case,kw,held", MAX_RPS, ids=[c[0] for c in MAX_RPS])
def test_a_max_rps_step_at_its_limits(case, kw, held):
    _, max_rps, _ = merge_parts(Series(step("step-1", 100, **kw)), LOAD, RUN, LAG, RUNNER_LIMITS, 1)
    assert max_rps["steps"][0]["ok"] is held, max_rps["steps"][0]


def test_the_held_share_is_95_percent():
    assert RATE_HELD_SHARE == 0.95


def test_the_knee_is_the_highest_step_held():
    series = step("step-1", 100, 1000) + step("step-2", 200, 2000) + step("step-3", 300, 2000)
    _, max_rps, _ = merge_parts(Series(series), LOAD, RUN, LAG, RUNNER_LIMITS, 1)
    assert [s["ok"] for s in max_rps["steps"]] == [True, True, False] and max_rps["knee_rate"] == 200, max_rps


LAG_LIMIT = RUNNER_LIMITS["LAG_LIMIT_MS"]
# (case, step series, held, cpu_bound)
CALIBRATE = [
    ("exactly the held share", dict(total=950), True, False),
    ("one request short of it", dict(total=949), False, False),
    ("one dropped iteration", dict(total=1000, drops=1), False, False),
    ("lag p95 at its limit", dict(total=1000, lag_p95=LAG_LIMIT), True, False),
    ("lag p95 over its limit", dict(total=1000, lag_p95=LAG_LIMIT + 0.1), False, True),
]


@pytest.mark.parametrize("case,kw,held,bound", CALIBRATE, ids=[c[0] for c in CALIBRATE])
def test_a_calibrate_step_at_its_limits(case, kw, held, bound):
    kw.setdefault("lag_p95", 1)
    _, _, cal = merge_parts(Series(step("step-1", 100, budget=False, **kw)), LOAD, RUN, LAG, RUNNER_LIMITS, 1)
    s = cal["steps"][0]
    assert (s["ok"], s["cpu_bound"]) == (held, bound), s
    assert cal["ceiling_rate"] == (100 if held else None)


# ---- the report's verdict: every budget a maximum, met at the limit ----

def run(total=1000, dropped=0, achieved=100.0, p9999=50.0, incomplete=None, **errors):
    errs = {c: errors.get(c, 0) for c in ERROR_CLASSES}
    return Run("x.json", "t", "static", "traefik", {"rate": 100}, {
        "total": total, "rate_target": 100, "rate_achieved": achieved, "dropped_iterations": dropped},
        {"p99.99": p9999, "p99": p9999}, errs, label="r", incomplete=incomplete or {})


# (case, run, budgets, status)
VERDICTS = [
    ("p99.99 at the budget", run(p9999=100.0), ["p99.99=100ms"], "PASS"),
    ("p99.99 just over it", run(p9999=100.001), ["p99.99=100ms"], "FAIL"),
    ("errors at the budget", run(connection=2), ["errors=2"], "PASS"),
    ("errors over it, of the first class", run(connection=3), ["errors=2"], "FAIL"),
    ("a dropped iteration, the default budgets", run(dropped=1), None, "FAIL"),
    ("no dropped iteration, the default budgets", run(), None, "PASS"),
    ("0.1 % errors at a 0.1 % budget", run(read=1), ["errors=0.1%"], "PASS"),
    ("0.2 % errors at a 0.1 % budget", run(read=2), ["errors=0.1%"], "FAIL"),
    ("an incomplete count at its budget is withheld", run(read=3, incomplete={"affects": ["errors"]}),
     ["errors=3"], "INCOMPLETE"),
    ("an incomplete count over its budget fails", run(read=4, incomplete={"affects": ["errors"]}),
     ["errors=3"], "FAIL"),
]


@pytest.mark.parametrize("case,r,budgets,status", VERDICTS, ids=[c[0] for c in VERDICTS])
def test_budgets_at_their_limits(case, r, budgets, status):
    v = judge(r, parse_budgets(budgets))
    assert v.status == status, v


@pytest.mark.parametrize("achieved,warned", [(95.0, False), (94.9, True)])
def test_rate_shortfall_below_the_held_share(achieved, warned):
    warnings = comparability_warnings([run(achieved=achieved)])
    assert any("achieved" in w for w in warnings) is warned, warnings


# ---- repeats ----

def test_the_interval_is_the_middle_95_percent_of_the_bootstrap():
    values = [10.0, 12.0, 11.0, 15.0, 9.0, 13.0]
    e = repeats.estimate(values)
    boot = repeats._bootstrap(values)
    assert (e.low, e.high) == (repeats._quantile(boot, 0.025), repeats._quantile(boot, 0.975)), e
    assert (e.low, e.high) != (repeats._quantile(boot, 0.05), repeats._quantile(boot, 0.95))


def test_two_repeats_give_no_interval_three_do():
    assert repeats.estimate([1.0, 2.0]).low is None and repeats.estimate([1.0, 2.0, 3.0]).low is not None
    assert repeats.compare("p99", [1, 2], [5, 6]).verdict == "too few repeats"


@pytest.mark.parametrize("b,verdict", [([20.0, 21.0, 22.0, 20.5, 21.5], "different"),
                                       ([5.0, 6.0, 5.5, 6.5, 5.2], "different"),
                                       ([9.0, 11.0, 10.0, 12.0, 10.5], "inconclusive")])
def test_different_on_either_side_of_zero(b, verdict):
    assert repeats.compare("p99", [10.0, 11.0, 10.5, 9.5, 10.2], b).verdict == verdict

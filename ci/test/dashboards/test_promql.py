"""The one reading of PromQL's structure both dashboard checkers use (ci/tools/dashboards/promql.py):
the metric names a query names, each selector's matchers, range and holding function, as tables."""
import pytest

import check  # ci/tools/dashboards, on pytest.ini's pythonpath
import lint
import promql

METRIC_NAMES = [
    ('sum by (le) (rate(foo_bucket{a="b"}[5m]))', ["foo_bucket"]),
    ("a atan2 b", ["a", "b"]),
    ('x{testid=~"$testid"} offset $window and on (job) y', ["x", "y"]),
    ("1e3 * Inf + NaN", []),
    ('label_replace(up, "dst", "$1", "src", "(.*)")', ["up"]),
    ('{__name__="k6_http_reqs_total"}', []),
    ("max_over_time(rate(z_total[$__rate_interval])[$__range:])", ["z_total"]),
]


@pytest.mark.parametrize("expr, names", METRIC_NAMES, ids=[e for e, _ in METRIC_NAMES])
def test_metric_names(expr, names):
    assert promql.metric_names(expr) == names


SELECTORS = [
    ('rate(k6_x_total{testid=~"$testid"}[$__rate_interval])',
     {"name": "k6_x_total", "matchers": 'testid=~"$testid"', "range": "$__rate_interval", "parent": "rate"}),
    ('increase(b{c="}"}[5m] offset 1h)', {"name": "b", "matchers": 'c="}"', "range": "5m", "parent": "increase",
                                          "offset": "1h"}),
    ("max_over_time(b[$__range:5s])", {"name": "b", "range": "$__range:5s", "subquery": True, "parent": "max_over_time"}),
    ("sum(rate(a[1m])) by (le)", {"name": "a", "range": "1m", "parent": "rate"}),
]


@pytest.mark.parametrize("expr, want", SELECTORS, ids=[e for e, _ in SELECTORS])
def test_selector(expr, want):
    (sel,) = promql.selectors(expr)
    assert {k: sel[k] for k in want} == want, sel


def test_both_checkers_read_promql_with_it():
    assert check.selectors is lint.selectors is promql.selectors and check.metric_names is promql.metric_names


RATES = [
    ("rate(x_total[5m])", False, ["rate() over [5m]"]),
    ("rate(x_total[$__rate_interval])", False, []),
    ("increase(x_total[$__range])", True, []),
    ("increase(x_total[$__range])", False, ["increase() over [$__range]"]),
    ("max_over_time(rate(x_total[$__rate_interval])[$__range:])", True, []),
]


@pytest.mark.parametrize("expr, instant, wants", RATES, ids=[f"{e} instant={i}" for e, i, _ in RATES])
def test_rate_ranges(expr, instant, wants):
    problems = check.rate_problems(expr, instant, "p")
    assert len(problems) == len(wants) and all(w in p for w, p in zip(wants, problems)), problems

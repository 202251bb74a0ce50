"""The dashboards as files: up to date with their generator, bench's conventions (check.py offline),
grafana/dashboard-linter's rules (one case per rule over every dashboard) and the dashboard schema
Grafana publishes (npm @grafana/schema, one case per dashboard)."""
import json
import os
import sys

import pytest

from conftest import ROOT, SCHEMA_TOOLS_PROBLEM, output_of, run

import lint  # ci/tools/dashboards, on pytest.ini's pythonpath
from harness import pythonpath

DASHBOARD_FILES = sorted((ROOT / "dashboards").glob("*.json"))


def test_generated():
    """dashboards/*.json are what dashboards/generator/generate.py writes."""
    r = run([sys.executable, ROOT / "dashboards/generator/generate.py", "--check"])
    assert r.returncode == 0, output_of(r)


def test_conventions():
    """bench conventions hold for every dashboard (check.py offline)."""
    r = run([sys.executable, ROOT / "ci/tools/dashboards/check.py"], env=pythonpath.env())
    assert r.returncode == 0, output_of(r)


@pytest.fixture(scope="module")
def lint_results():
    return lint.lint([(f.name, json.loads(f.read_text())) for f in DASHBOARD_FILES])


@pytest.mark.parametrize("rule", [rule for rule, _fn, _parser in lint.RULES])
def test_linter_rule(lint_results, rule):
    """grafana/dashboard-linter's rule holds for every dashboard."""
    assert lint_results[rule] == [], "\n".join(lint_results[rule])


@pytest.fixture(scope="module")
def schema_problems():
    """schema_check.py over every dashboard, with the tools conftest.py installed."""
    if SCHEMA_TOOLS_PROBLEM:
        pytest.skip(f"dashboards against @grafana/schema: {SCHEMA_TOOLS_PROBLEM[0]}")
    tools = os.environ["GRAFANA_SCHEMA_TOOLS"]
    r = run([sys.executable, ROOT / "ci/tools/dashboards/schema_check.py", "--tools", tools, "--assertions"],
            env=pythonpath.env())
    lines = [line.split("\t", 1) for line in r.stdout.splitlines() if "\t" in line]
    states = {what.split(" ", 1)[0]: state for state, what in lines if what.split(" ", 1)[0].endswith(".json")}
    # problems tied to no dashboard (tsc itself failing) or an exit the lines do not explain fail
    # every case: the per-dashboard verdicts cannot be trusted then
    others = [what for state, what in lines if state != "ok" and not what.split(" ", 1)[0].endswith(".json")]
    assert not others, f"schema_check.py: {others}\n{r.stderr}"
    assert (r.returncode == 0) == all(s == "ok" for s in states.values()), \
        f"schema_check.py exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r, states


@pytest.mark.parametrize("name", [f.name for f in DASHBOARD_FILES])
def test_schema(schema_problems, name):
    """The dashboard and its panels' options conform to @grafana/schema."""
    r, states = schema_problems
    assert states.get(name) == "ok", f"{name}: {states.get(name, 'not checked')}\n{r.stderr}"


def test_attribution_row_reads_the_contract():
    """The run overview's attribution row: the window variable W defaults to the contract's window plus
    k6's push interval; its two queries are the load's errors with (and without) a rise of every event
    counter the contract names within W; an annotation per event source and for the controllers' reloads."""
    contract = json.loads((ROOT / "scenarios/contract.json").read_text())
    attribution = contract["eventAttribution"]
    dash = json.loads((ROOT / "dashboards/run-overview.json").read_text())
    (window,) = [v for v in dash["templating"]["list"] if v["name"] == "window"]
    assert window["type"] == "textbox" and window["query"] == f"{attribution['windowS'] + attribution['pushIntervalS']:g}s"
    (panel,) = [p for p, _ in lint.check.walk_panels(dash) if p.get("title") == "Errors within W of an event vs. no event nearby"]
    near, none = (t["expr"] for t in panel["targets"])
    load = 'testid=~"$testid", group!~"::(setup|teardown)", scenario!="warmup", role="load"'
    errors = (f'((sum(increase(k6_bench_errors_total{{{load}}}[$__rate_interval]))) or on () '
              f'(0 * sum (rate(k6_http_reqs_total{{{load}}}[$__rate_interval]))))')
    assert near.startswith(errors + " and on() (") and none.startswith(errors + " unless on() ("), (near, none)
    assert near.split(" and on() ", 1)[1] == none.split(" unless on() ", 1)[1], "both sides test the same events"
    for metric in ["k6_bench_scale_events_total"] + [s["metric"] for s in attribution["sources"]]:
        assert f"(sum({metric}{{" in near and f"}}) - sum({metric}{{" in near and "} offset $window) > 0)" in near, metric
    # the stream breaks' panel: the contract's breaks metric by its label, split by the same events
    metric = next(m["prometheus"] for m in contract["metrics"]["list"] if m["name"] == attribution["breaks"]["metric"])
    (breaks,) = [p for p, _ in lint.check.walk_panels(dash) if p.get("title") == "Stream breaks within W of an event vs. no event nearby"]
    b_near, b_none = (t["expr"] for t in breaks["targets"])
    assert b_near.startswith(f"(sum by ({attribution['breaks']['by']}) (increase({metric}{{"), b_near
    assert b_near.split(" and on() ", 1)[1] == near.split(" and on() ", 1)[1] == b_none.split(" unless on() ", 1)[1]
    names = {a["name"]: a["target"]["expr"] for a in dash["annotations"]["list"] if "target" in a}
    for s in attribution["sources"]:
        assert any(s["metric"] in expr for expr in names.values()), s
    assert all(r["metric"] in names["Controller reloads"] for r in contract["controllerReloads"]["list"]), names

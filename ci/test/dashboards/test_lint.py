#!/usr/bin/env python3
"""Mutation tests of lint.py (grafana/dashboard-linter's rules) and schema_check.py (@grafana/schema):
the real dashboards pass; a copy broken in one way turns exactly the rule that guards it red.
Run: .tools/bench-venv/bin/python -m pytest ci/test/dashboards/test_lint.py
The schema tests need the npm tools: GRAFANA_SCHEMA_TOOLS=$(ci/tools/grafana-schema.sh)."""
import contextlib
import copy
import io
import json
import os
import pathlib
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
import lint  # ci/tools/dashboards, on pytest.ini's pythonpath
import schema_check

DASHBOARDS = HERE.parents[2] / "dashboards"
REAL = {f.name: json.loads(f.read_text()) for f in sorted(DASHBOARDS.glob("*.json"))}


def copy_of(name="run-overview.json"):
    return copy.deepcopy(REAL[name])


def panel(dash, kind="timeseries", title=None):
    return next(p for p in lint.panels_of(dash) if p.get("type") == kind and (title is None or p["title"] == title))


def variable(dash, name):
    return next(v for v in dash["templating"]["list"] if v["name"] == name)


class LinterRules(unittest.TestCase):
    """Each mutation is judged against the same dashboard unbroken, so a problem of the real
    dashboard shows once (in test_real_dashboards_pass_every_rule), not in every mutation test."""

    def red(self, dash, rule, base="run-overview.json"):
        before = lint.lint([("mutant.json", REAL[base])])
        after = lint.lint([("mutant.json", dash)])
        self.assertGreater(len(after[rule]), len(before[rule]), f"{rule} did not go red")
        changed = [r for r in after if r != rule and after[r] != before[r]]
        self.assertEqual(changed, [], "other rules changed too")

    def green(self, dash, rule, base="run-overview.json"):
        self.assertEqual(lint.lint([("mutant.json", dash)])[rule],
                         lint.lint([("mutant.json", REAL[base])])[rule])

    def test_real_dashboards_pass_every_rule(self):
        results = lint.lint(list(REAL.items()))
        self.assertEqual({r: p for r, p in results.items() if p}, {})
        self.assertEqual(len(results), len(lint.RULES))

    def test_template_datasource_rule(self):
        d = copy_of()
        variable(d, "datasource")["name"] = "prom"
        for p in lint.panels_of(d):  # keep every panel on the renamed variable: one rule at stake
            if isinstance(p.get("datasource"), dict):
                p["datasource"]["uid"] = "${prom}"
        self.red(d, "template-datasource-rule")

    def test_template_label_promql_rule_function(self):
        d = copy_of()
        variable(d, "testid")["query"]["query"] = "label_list(k6_http_reqs_total, testid)"
        self.red(d, "template-label-promql-rule")

    def test_template_label_promql_rule_promql(self):
        d = copy_of()
        variable(d, "testid")["query"]["query"] = "label_values(sum(k6_http_reqs_total, testid)"
        self.red(d, "template-label-promql-rule")

    def test_template_on_time_change_reload_rule(self):
        d = copy_of()
        variable(d, "testid")["refresh"] = 1
        self.red(d, "template-on-time-change-reload-rule")

    def test_panel_datasource_rule(self):
        d = copy_of()
        panel(d)["datasource"] = {"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}
        self.red(d, "panel-datasource-rule")

    def test_panel_title_description_rule(self):
        d = copy_of()
        panel(d).pop("description")
        self.red(d, "panel-title-description-rule")

    def test_panel_units_rule_unknown_unit(self):
        d = copy_of()
        panel(d)["fieldConfig"]["defaults"]["unit"] = "requests/s"
        self.red(d, "panel-units-rule")

    def test_panel_units_rule_value_mappings_need_no_unit(self):
        d = copy_of()
        p = panel(d)
        p["fieldConfig"]["defaults"]["unit"] = ""
        p["fieldConfig"]["defaults"]["mappings"] = [{"type": "value", "options": {"0": {"text": "down"}}}]
        self.green(d, "panel-units-rule")

    def test_panel_no_targets_rule(self):
        d = copy_of()
        panel(d)["targets"] = []
        self.red(d, "panel-no-targets-rule")

    def test_target_promql_rule(self):
        d = copy_of()
        t = panel(d)["targets"][0]
        t["expr"] = t["expr"][:-1]  # a closing parenthesis short
        self.red(d, "target-promql-rule")

    def test_target_rate_interval_rule(self):
        d = copy_of()
        panel(d)["targets"][0]["expr"] = 'sum(rate(k6_http_reqs_total{testid=~"$testid", role="load"}[5m]))'
        self.red(d, "target-rate-interval-rule")

    def test_target_rate_interval_rule_range_query_over_dashboard_range(self):
        # The exclusion is for instant queries: a graph of rate over $__range is still red.
        d = copy_of()
        panel(d)["targets"][0]["expr"] = 'sum(rate(k6_http_reqs_total{testid=~"$testid", role="load"}[$__range]))'
        self.red(d, "target-rate-interval-rule")

    def test_target_counter_agg_rule(self):
        d = copy_of()
        panel(d)["targets"][0]["expr"] = 'sum(k6_http_reqs_total{testid=~"$testid", role="load"})'
        self.red(d, "target-counter-agg-rule")

    def test_target_counter_agg_rule_total_in_range_query(self):
        # Whole-run totals are excluded in instant queries only.
        d = copy_of()
        panel(d)["targets"][0]["expr"] = 'sum(max_over_time(k6_http_reqs_total{testid=~"$testid", role="load"}[$__rate_interval]))'
        self.red(d, "target-counter-agg-rule")

    def test_uneditable_dashboard(self):
        d = copy_of()
        d["editable"] = True
        self.red(d, "uneditable-dashboard")

    def test_selectors_structure(self):
        sels = lint.selectors('sum by (le) (rate(a_total{x="}"}[5m])) / max_over_time(b[$__range:5s]) + c')
        self.assertEqual([(s["name"], s["range"], s["subquery"], s["parent"]) for s in sels],
                         [("a_total", "5m", False, "rate"), ("b", "$__range:5s", True, "max_over_time"),
                          ("c", None, False, None)])


@unittest.skipUnless(os.environ.get("GRAFANA_SCHEMA_TOOLS"),
                     "GRAFANA_SCHEMA_TOOLS unset (the folder ci/tools/grafana-schema.sh prints)")
class GrafanaSchema(unittest.TestCase):
    """One tsc run over the real dashboards and one broken copy per way of breaking them."""

    MUTATIONS = {
        "unknown-dashboard-key": lambda d: d.update(style="dark"),
        "link-missing-icon": lambda d: d["links"][0].pop("icon"),
        "grid-width-string": lambda d: panel(d)["gridPos"].update(w="8"),
        "option-typo": lambda d: panel(d)["options"].update(legnd={"showLegend": True}),
        "enum-value": lambda d: panel(d)["options"]["legend"].update(displayMode="tabel"),
        "custom-config-type": lambda d: panel(d)["fieldConfig"]["defaults"]["custom"].update(lineWidth="1"),
        "annotation-query-outside-target": lambda d: d["annotations"]["list"][1].update(expr="up"),
    }

    @classmethod
    def setUpClass(cls):
        tools = os.environ["GRAFANA_SCHEMA_TOOLS"]
        with tempfile.TemporaryDirectory() as tmp:
            for name, dash in REAL.items():
                (pathlib.Path(tmp) / name).write_text(json.dumps(dash, indent=2))
            for name, change in cls.MUTATIONS.items():
                d = copy_of()
                change(d)
                (pathlib.Path(tmp) / f"mutant-{name}.json").write_text(json.dumps(d, indent=2))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                cls.status = schema_check.main(["--tools", tools, tmp])
            cls.output = out.getvalue()

    def problems_of(self, file_name):
        return [line for line in self.output.splitlines() if line.startswith(f"problem: {file_name}")]

    def test_real_dashboards_conform(self):
        for name in REAL:
            with self.subTest(dashboard=name):
                self.assertEqual(self.problems_of(name), [])

    def test_each_mutation_is_rejected(self):
        self.assertEqual(self.status, 1)
        for name in self.MUTATIONS:
            with self.subTest(mutation=name):
                self.assertTrue(self.problems_of(f"mutant-{name}.json"), self.output)


if __name__ == "__main__":
    unittest.main()

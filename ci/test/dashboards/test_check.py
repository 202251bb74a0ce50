#!/usr/bin/env python3
"""Unit tests of check.py: the real dashboards pass, and each broken copy fails with its message.
Run: .tools/bench-venv/bin/python -m pytest ci/test/dashboards/test_check.py"""
import contextlib
import copy
import io
import json
import pathlib
import tempfile
import unittest

import check  # ci/tools/dashboards, on pytest.ini's pythonpath

DASHBOARDS = check.DEFAULT_DASHBOARDS
KNOWN = check.load_fixture(check.DEFAULT_FIXTURE)
OVERVIEW = json.loads((DASHBOARDS / "run-overview.json").read_text())


def first_data_panel(dash):
    return next(p for p, _ in check.walk_panels(dash) if p.get("type") == "timeseries")


def problems_of(dash):
    return check.convention_problems(pathlib.Path("test.json"), dash, KNOWN)


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = check.main(list(argv))
    return rc, out.getvalue() + err.getvalue()


class RealDashboards(unittest.TestCase):
    def test_real_dashboards_have_no_problems(self):
        for f in sorted(DASHBOARDS.glob("*.json")):
            with self.subTest(dashboard=f.name):
                self.assertEqual(check.convention_problems(f, json.loads(f.read_text()), KNOWN), [])

    def test_every_data_panel_has_queries(self):
        for f in sorted(DASHBOARDS.glob("*.json")):
            dash = json.loads(f.read_text())
            panels = [p for p, _ in check.walk_panels(dash) if p.get("type") in check.DATA_PANEL_TYPES]
            self.assertTrue(panels, f.name)
            self.assertTrue(all(p.get("targets") for p in panels), f.name)


class BrokenDashboards(unittest.TestCase):
    def assertProblem(self, dash, fragment):
        found = problems_of(dash)
        self.assertTrue(any(fragment in p for p in found), f"{fragment!r} not in {found}")

    def mutated(self, change):
        dash = copy.deepcopy(OVERVIEW)
        change(dash)
        return dash

    def test_hard_coded_datasource_uid(self):
        def change(d):
            first_data_panel(d)["datasource"] = {"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}
        self.assertProblem(self.mutated(change), "hard-coded datasource uid 'P1809F7CD0C75ACF3'")

    def test_hard_coded_datasource_in_target(self):
        def change(d):
            first_data_panel(d)["targets"][0]["datasource"] = {"type": "prometheus", "uid": "abc"}
        self.assertProblem(self.mutated(change), "hard-coded datasource uid 'abc'")

    def test_datasource_by_name(self):
        def change(d):
            first_data_panel(d)["datasource"] = "Prometheus"
        self.assertProblem(self.mutated(change), "datasource 'Prometheus' is a name or UID from one machine")

    def test_missing_unit(self):
        def change(d):
            first_data_panel(d)["fieldConfig"]["defaults"].pop("unit")
        self.assertProblem(self.mutated(change), "no unit")

    def test_fixed_rate_interval(self):
        def change(d):
            t = first_data_panel(d)["targets"][0]
            t["expr"] = 'sum(rate(k6_http_reqs_total{testid=~"$testid"}[5m]))'
        self.assertProblem(self.mutated(change), "rate() over [5m]; use [$__rate_interval]")

    def test_range_over_dashboard_range_in_range_query(self):
        def change(d):
            t = first_data_panel(d)["targets"][0]
            t["expr"] = 'sum(increase(k6_http_reqs_total{testid=~"$testid"}[$__range]))'
        self.assertProblem(self.mutated(change), "increase() over [$__range]; use [$__rate_interval]")

    def test_k6_selector_without_testid(self):
        def change(d):
            first_data_panel(d)["targets"][0]["expr"] = "sum(rate(k6_http_reqs_total[$__rate_interval]))"
        self.assertProblem(self.mutated(change), 'k6_http_reqs_total is not scoped to the run')

    def test_duplicate_panel_id(self):
        def change(d):
            panels = [p for p, _ in check.walk_panels(d) if p.get("type") != "row"]
            panels[1]["id"] = panels[0]["id"]
        self.assertProblem(self.mutated(change), "is used twice")

    def test_overlapping_panels(self):
        def change(d):
            panels = [p for p in d["panels"] if p.get("type") != "row"]
            panels[1]["gridPos"] = dict(panels[0]["gridPos"])
        self.assertProblem(self.mutated(change), "overlaps panel")

    def test_panel_outside_grid(self):
        def change(d):
            first_data_panel(d)["gridPos"]["x"] = 20
        self.assertProblem(self.mutated(change), "outside the 24-column grid")

    def test_missing_datasource_variable(self):
        def change(d):
            d["templating"]["list"] = [v for v in d["templating"]["list"] if v["name"] != "datasource"]
        self.assertProblem(self.mutated(change), 'needs a variable "datasource"')

    def test_missing_testid_variable(self):
        def change(d):
            d["templating"]["list"] = [v for v in d["templating"]["list"] if v["name"] != "testid"]
        self.assertProblem(self.mutated(change), 'needs a variable "testid"')

    def test_import_only_inputs(self):
        def change(d):
            d["__inputs"] = [{"name": "DS_PROMETHEUS", "type": "datasource"}]
        self.assertProblem(self.mutated(change), "has __inputs")

    def test_unknown_metric(self):
        def change(d):
            first_data_panel(d)["targets"][0]["expr"] = "sum(rate(traefik_backend_requests_total[$__rate_interval]))"
        self.assertProblem(self.mutated(change), "metric traefik_backend_requests_total is not in the metric fixture")

    def test_native_histogram_bucket(self):
        def change(d):
            first_data_panel(d)["targets"][0]["expr"] = (
                'histogram_quantile(0.99, sum by (le) (rate(k6_http_req_duration_seconds_bucket'
                '{testid=~"$testid"}[$__rate_interval])))')
        self.assertProblem(self.mutated(change), "it is a native histogram: no _bucket series")

    def test_empty_expression(self):
        def change(d):
            first_data_panel(d)["targets"][0]["expr"] = "  "
        self.assertProblem(self.mutated(change), "empty expression")

    def test_duplicate_ref_ids(self):
        def change(d):
            p = first_data_panel(d)
            p["targets"].append(dict(p["targets"][0]))
        self.assertProblem(self.mutated(change), "refIds must be present and unique")


class PromqlText(unittest.TestCase):
    def test_metric_names_skip_functions_labels_durations(self):
        expr = ('sum by (le, code) (rate(foo_bucket{a="b", c=~"x|y"}[5m] offset 1h)) / 1e3 '
                '+ on(pod) group_left(node) bar * 2 and baz')
        self.assertEqual(check.metric_names(expr), ["foo_bucket", "bar", "baz"])

    def test_metric_names_ignore_strings(self):
        expr = 'label_replace(up, "percentile", "p99 quantile", "", "")'
        self.assertEqual(check.metric_names(expr), ["up"])

    def test_variable_query(self):
        self.assertEqual(check.variable_query_to_promql("label_values(k6_vus{a=\"b\"}, testid)"), 'k6_vus{a="b"}')

    def test_substitute_all_forms(self):
        values = {"testid": "run-1", "__rate_interval": "60s"}
        self.assertEqual(check.substitute('x{t=~"$testid",u="${testid}",v="[[testid]]"}[$__rate_interval]', values),
                         'x{t=~"run-1",u="run-1",v="run-1"}[60s]')

    def test_substitute_unknown_variable(self):
        with self.assertRaisesRegex(check.UsageError, r"uses \$nope, which the dashboard does not define"):
            check.substitute("x{a=\"$nope\"}", {})


class RequiredPanels(unittest.TestCase):
    """--require-data selection: @k6 leaves the route panels out (a churn run has no routes), @routes
    takes exactly them, and "!" takes a match back."""
    def reports(self):
        return [{"uid": "bench-run-overview", "title": t} for t in
                ("Request rate", "Route propagation over range: create -> first 200", "Routes created and serving")]

    def required_titles(self, *selectors):
        reports = self.reports()
        check.select_required(list(selectors), reports)  # the other dashboards' selectors match nothing here
        return [r["title"] for r in reports if r.get("required")]

    def test_k6_preset_leaves_route_panels_out(self):
        self.assertEqual(self.required_titles("@k6"), ["Request rate"])

    def test_routes_preset_takes_route_panels(self):
        self.assertEqual(self.required_titles("@routes"),
                         ["Route propagation over range: create -> first 200", "Routes created and serving"])
        self.assertEqual(len(self.required_titles("@k6", "@routes")), 3)

    def test_negation_takes_back_in_order(self):
        self.assertEqual(self.required_titles("bench-run-overview/*", "!bench-run-overview/Routes*"),
                         ["Request rate", "Route propagation over range: create -> first 200"])

    def test_real_run_overview_has_route_panels(self):
        titles = [p.get("title") for p, _ in check.walk_panels(OVERVIEW)]
        self.assertEqual(sum(1 for t in titles if t and t.startswith("Route") and not t.startswith("Routes:")), 4)


class CommandLine(unittest.TestCase):
    def assertUsageError(self, message, *argv):
        rc, out = run_cli(str(DASHBOARDS), *argv)
        self.assertEqual(rc, 2, out)
        self.assertIn(message, out)

    def test_offline_real_dashboards_pass(self):
        rc, out = run_cli(str(DASHBOARDS))
        self.assertEqual(rc, 0, out)
        self.assertIn("0 problems", out)

    def test_invalid_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            (pathlib.Path(tmp) / "bad.json").write_text("{not json")
            rc, out = run_cli(tmp)
        self.assertEqual(rc, 1)
        self.assertIn("bad.json: not valid JSON", out)

    def test_missing_path(self):
        rc, out = run_cli("/nonexistent/dashboards")
        self.assertEqual(rc, 2)
        self.assertIn("dashboard path /nonexistent/dashboards does not exist", out)

    def test_bad_testid(self):
        self.assertUsageError("--testid 'a\"b' may contain only letters, digits and . _ : -",
                              "--prometheus", "http://127.0.0.1:1", "--testid", 'a"b')

    def test_prometheus_needs_testid(self):
        self.assertUsageError("--prometheus needs --testid", "--prometheus", "http://127.0.0.1:1")

    def test_bad_url(self):
        self.assertUsageError("expected an http(s) URL", "--prometheus", "127.0.0.1:9090", "--testid", "x")

    def test_require_data_needs_prometheus(self):
        self.assertUsageError("--require-data needs --prometheus", "--require-data", "bench-run-overview/*")

    def test_bad_time(self):
        self.assertUsageError("time 'yesterday' is not unix seconds", "--prometheus", "http://127.0.0.1:1",
                              "--testid", "x", "--start", "yesterday")

    def test_unreachable_prometheus(self):
        self.assertUsageError("Prometheus at http://127.0.0.1:1 is not reachable",
                              "--prometheus", "http://127.0.0.1:1", "--testid", "x")

    def assertFixtureError(self, fixture, message):
        with tempfile.TemporaryDirectory() as tmp:
            f = pathlib.Path(tmp) / "fixture.json"
            f.write_text(json.dumps(fixture))
            self.assertUsageError(message, "--fixture", str(f))

    def test_fixture_type_checked(self):
        self.assertFixtureError({"sources": {"x": {"cite": ["doc"], "metrics": {"m": "timer"}}}},
                                "m has type 'timer'; allowed: counter, gauge, histogram, native_histogram, summary")

    def test_fixture_needs_citation(self):
        self.assertFixtureError({"sources": {"x": {"metrics": {"m": "gauge"}}}}, "source 'x' cites nothing")


if __name__ == "__main__":
    unittest.main()

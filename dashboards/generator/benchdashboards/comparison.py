"""Dashboard 3, comparison: several runs side by side (the published results table live, bars, and
the runs over time)."""
from .panels import (  # the panel vocabulary
    ERROR_CLASSES, Layout, RUN, barchart, dashboard, datasource_variable, distribution_panel,
    k6_average_rate, k6_quantile, k6_rate, k6_total, table, targets, testid_variable, timeseries,
    zero_total, zero_while_running)


def comparison():
    lay = Layout()
    results_table_row(lay)
    bars_row(lay)
    over_time_row(lay)
    return dashboard(
        "bench-comparison", "bench / comparison",
        "Several runs side by side (controller x experiment): the results table with p99, p99.9, "
        "p99.9999, error classes and achieved rate, bars, and the percentile-distribution chart.",
        lay, [datasource_variable(), testid_variable(multi=True)], time_from="now-6h", refresh="30s")


def results_table_row(lay):
    # experiment = the entry script (dynamic, paths, ...); scenario = k6's part of it (load, or
    # ingress_4k ... in paths): one row per measured part.
    by = "testid, controller, experiment, scenario"
    lay.row("Results table: the published comparison, live")
    quantile_cols = [("p50", "0.5"), ("p99", "0.99"), ("p99.9", "0.999"), ("p99.9999", "0.999999")]
    specs = [(k6_quantile(q, by=by, window="$__range"), "") for _, q in quantile_cols]
    specs.append((k6_average_rate(by), ""))
    specs.append((k6_total("k6_http_reqs_total", by), ""))
    for cls in ERROR_CLASSES:
        specs.append((zero_total(k6_total("k6_bench_errors_total", by, f'{RUN}, class="{cls}"'), by), ""))
    # Dropped iterations last: what the generator could not send (the open model's honesty column).
    specs.append((zero_total(k6_total("k6_dropped_iterations_total", by), by), ""))
    names = [c for c, _ in quantile_cols] + ["rate (avg)", "requests"] + ERROR_CLASSES + ["dropped"]
    renames = {f"Value #{chr(ord('A') + i)}": n for i, n in enumerate(names)}
    count_cols = ["requests"] + ERROR_CLASSES + ["dropped"]
    overrides = [{"matcher": {"id": "byName", "options": n},
                  "properties": [{"id": "unit", "value": "short"}, {"id": "decimals", "value": 0}]}
                 for n in count_cols]
    overrides.append({"matcher": {"id": "byName", "options": "rate (avg)"},
                      "properties": [{"id": "unit", "value": "reqps"}]})
    lay.add(table(
        "Results by run",
        "One row per run part (testid x controller x experiment x k6 scenario) over the dashboard "
        "time range: latency "
        "percentiles from the merged native histogram, average achieved rate, total requests, "
        "errors per class and dropped iterations (requests the generator could not send). Set the "
        "time range to cover the runs.",
        targets(*specs, instant=True, table=True), "s", renames,
        order=["testid", "controller", "experiment", "scenario", *names], overrides=overrides), 24, 9)


def bars_row(lay):
    lay.row("Bars")
    tail = [("p99", "0.99"), ("p99.9", "0.999"), ("p99.9999", "0.999999")]
    lay.add(barchart(
        "Tail latency by run",
        "p99, p99.9 and p99.9999 per run (log scale).",
        targets(*[(k6_quantile(q, by="testid", window="$__range"), "") for _, q in tail],
                instant=True, table=True),
        "s",
        [{"id": "merge", "options": {}},
         {"id": "organize", "options": {"excludeByName": {"Time": True},
                                        "renameByName": {f"Value #{chr(ord('A') + i)}": n
                                                         for i, (n, _) in enumerate(tail)}}}],
        log=True, x_field="testid"), 12, 9)
    lay.add(barchart(
        "Errors by class and run",
        "Total errors per class per run, stacked.",
        targets((zero_total(k6_total("k6_bench_errors_total", "testid, class"), "testid", ("class", "none")), ""),
                instant=True, table=True),
        "short",
        [{"id": "groupingToMatrix", "options": {"columnField": "class", "rowField": "testid",
                                                "valueField": "Value"}}],
        stack=True, x_field="testid\\class"), 12, 9)
    lay.add(barchart(
        "Achieved request rate by run",
        "Average achieved request rate of each run over its own duration (all runners).",
        targets((k6_average_rate("testid"), ""),
                instant=True, table=True),
        "reqps", [{"id": "organize", "options": {"excludeByName": {"Time": True},
                                                 "renameByName": {"Value": "achieved rate"}}}],
        x_field="testid"), 12, 9)
    lay.add(distribution_panel(
        "Latency by percentile",
        "The published percentile chart, live: one series per run, x = p50 ... p99.9999 evenly "
        "spaced in 'number of nines', y = latency (log)."), 12, 9)


def over_time_row(lay):
    lay.row("Over time, run against run")
    lay.add(timeseries(
        "p99 by run",
        "p99 over time per run; runs at different times appear side by side on the time axis.",
        targets((k6_quantile("0.99", by="testid"), "{{testid}}")), "s", log=True), 12, 8)
    lay.add(timeseries(
        "Errors by run",
        "All error classes per second per run.",
        targets((zero_while_running(k6_rate("k6_bench_errors_total", by="testid"), by="testid"), "{{testid}}")),
        "reqps", minimum=0), 12, 8)

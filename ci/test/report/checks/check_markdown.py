"""Checks that the Markdown tables of a report carry exactly the numbers of its summary files.

Usage: python check_markdown.py REPORT_DIR
Reads REPORT_DIR/report.md and report.json (which names each row's summary file and by_path entry),
re-reads the summary JSON independently of the generator, and compares every latency, error,
request and convergence cell, and every cell of the Routes table (route experiments), of the
Controller restart table (controller-restart), of the Data-plane scale tables (dataplane-scale)
and of the Controller upgrade tables (controller-upgrade) when there is one. Prints one line per mismatch; exit 1 on any, 0 with a count otherwise.
"""

import json
import os
import sys

# The percentiles and error classes from their one statement, not from the generator.
CONTRACT = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "scenarios", "contract.json")))
LATENCY = ["min", "avg"] + [p["key"] for p in CONTRACT["percentiles"]["list"]] + ["max"]
ERRORS = list(CONTRACT["errorClasses"]["causes"])
TOLERANCE = 0.0005  # the tables show at most 3 decimals


def tables(markdown):
    """Every pipe table as (headers, rows), rows as lists of cell strings."""
    out, current = [], None
    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = [c.strip().replace("\\|", "|") for c in line.strip().strip("|").split(" | ")]
            if current is None:
                current = (cells, [])
                out.append(current)
            elif not all(c and set(c) <= {"-", "|"} for c in cells):
                current[1].append(cells)
        else:
            current = None
    return out


def find_table(all_tables, first_headers):
    for headers, rows in all_tables:
        if headers[:len(first_headers)] == first_headers:
            return headers, rows
    raise SystemExit(f"no table with headers starting {first_headers}")


def same(cell, expected):
    if expected is None:
        return cell == "n/a"
    try:
        return abs(float(cell) - float(expected)) <= TOLERANCE
    except ValueError:
        return False


def main(report_dir):
    with open(os.path.join(report_dir, "report.md"), encoding="utf-8") as f:
        md = tables(f.read())
    with open(os.path.join(report_dir, "report.json"), encoding="utf-8") as f:
        runs = json.load(f)["runs"]
    lat_h, lat_rows = find_table(md, ["run", "requests", "min (ms)"])
    err_h, err_rows = find_table(md, ["run", "requests", "connection"])
    conv_h, conv_rows = find_table(md, ["run", "scale events"])
    problems, compared = [], 0

    def compare(where, cell, expected):
        nonlocal compared
        compared += 1
        if not same(cell, expected):
            problems.append(f"{where}: markdown {cell!r} != json {expected!r}")

    for run in runs:
        with open(run["source"], encoding="utf-8") as f:
            summary = json.load(f)
        data = summary["by_path"][run["path"]] if run["path"] else summary
        label = run["label"]
        lat = [r for r in lat_rows if r[0] == label]
        err = [r for r in err_rows if r[0] == label]
        if len(lat) != 1 or len(err) != 1:
            problems.append(f"{label}: expected one row in the latency and errors tables, "
                            f"found {len(lat)} and {len(err)}")
            continue
        compare(f"{label} requests", lat[0][1], data["requests"]["total"])
        for key in LATENCY:
            compare(f"{label} latency {key}", lat[0][lat_h.index(f'{key} (ms)')], data["latency_ms"].get(key))
        compare(f"{label} errors requests", err[0][1], data["requests"]["total"])
        for cls in ERRORS:
            compare(f"{label} errors {cls}", err[0][err_h.index(cls)], data["errors"].get(cls, 0))
        compare(f"{label} errors total", err[0][err_h.index("total")],
                sum(data["errors"].get(c, 0) for c in ERRORS))
        if not run["path"]:
            conv = [r for r in conv_rows if r[0] == label]
            if len(conv) != 1:
                problems.append(f"{label}: expected one convergence row, found {len(conv)}")
                continue
            compare(f"{label} scale events", conv[0][1], summary.get("scale_events", 0))
            for event in ("added", "removed"):
                stats = (summary.get("convergence_ms") or {}).get(event) or {}
                for stat in ("count", "p50", "max"):
                    header = f"{event} {stat}" + ("" if stat == "count" else " (ms)")
                    compare(f"{label} convergence {event} {stat}", conv[0][conv_h.index(header)], stats.get(stat))
    for check in (compare_routes, compare_controller_restart, compare_dataplane_scale, compare_controller_upgrade):
        n, found = check(md, runs)
        compared += n
        problems += found
    if len(lat_rows) != len(runs):
        problems.append(f"latency table has {len(lat_rows)} rows for {len(runs)} runs")
    for p in problems:
        print(f"mismatch: {p}")
    print(f"{compared} cells compared, {len(problems)} mismatches")
    return 1 if problems or compared == 0 else 0


# Routes table column -> how to read it from routes.by_kind.<kind> of the summary.
ROUTE_COLUMNS = {
    "created": lambda k: k["created"], "serving": lambda k: k["serving"], "unconverged": lambda k: k["unconverged"],
    "propagation p50 (ms)": lambda k: k["propagation_ms"]["p50"], "p90 (ms)": lambda k: k["propagation_ms"]["p90"],
    "p99 (ms)": lambda k: k["propagation_ms"]["p99"], "max (ms)": lambda k: k["propagation_ms"]["max"],
    "404s before 200": lambda k: k["pre_ready_statuses"]["404"],
    "503s before 200": lambda k: k["pre_ready_statuses"]["503"],
    "other before 200": lambda k: sum(v for b, v in k["pre_ready_statuses"].items() if b not in ("404", "503")),
    "changes": lambda k: k["changes"], "change errors": lambda k: k["change_errors"],
    "load non-2xx": lambda k: k["load_non_2xx"],
    "applied (ms)": lambda k: (k["scale_ms"] or {}).get("applied"),
    "all serving (ms)": lambda k: (k["scale_ms"] or {}).get("all_serving"),
    "after last apply (ms)": lambda k: (k["scale_ms"] or {}).get("after_last_apply"),
}


# Controller restart table column -> how to read it from the summary's controller_restart.
RESTART_COLUMNS = {
    "deleted": lambda c: c["pods_deleted"], "unrecovered": lambda c: c["unrecovered"],
    "replaced p50 (ms)": lambda c: c["replaced_ms"]["p50"], "replaced max (ms)": lambda c: c["replaced_ms"]["max"],
    "recovered p50 (ms)": lambda c: c["recovered_ms"]["p50"], "recovered max (ms)": lambda c: c["recovered_ms"]["max"],
    "requests lost": lambda c: c["requests_lost"],
}


def whole_runs_with(runs, key):
    """[(label, summary[key])] of the whole runs (no by_path entry) whose summary has key."""
    out = []
    for run in runs:
        if run["path"]:
            continue
        with open(run["source"], encoding="utf-8") as f:
            summary = json.load(f)
        if summary.get(key):
            out.append((run["label"], summary[key]))
    return out


# Data-plane scale table column -> how to read it from the summary's dataplane_scale (and its steps table's).
DATAPLANE_COLUMNS = {
    "steps": lambda d: len(d["steps"]), "not Ready": lambda d: d["unready"],
    "Ready p50 (ms)": lambda d: d["ready_ms"]["p50"], "Ready max (ms)": lambda d: d["ready_ms"]["max"],
    "requests lost": lambda d: d["requests_lost"],
}
STEP_COLUMNS = {"Ready after (ms)": lambda st: st["ready_ms"], "probes failed": lambda st: st["probe_failures"]}


def compare_gated_section(md, runs, key, first_headers, columns, what):
    """Every row of WHAT's table (headers starting FIRST_HEADERS) against summary[KEY]: each of COLUMNS
    and the zero-error gate; (cells compared, problems)."""
    sections = whole_runs_with(runs, key)
    if not sections:
        return 0, []
    headers, rows = find_table(md, first_headers)
    compared, problems = 0, []
    for label, c in sections:
        row = [r for r in rows if r[0] == label]
        if len(row) != 1:
            problems.append(f"{label}: expected one {what} row, found {len(row)}")
            continue
        for column, read in columns.items():
            compared += 1
            if not same(row[0][headers.index(column)], read(c)):
                problems.append(f"{label} {what} {column}: markdown {row[0][headers.index(column)]!r} != json {read(c)!r}")
        compared += 1
        if row[0][headers.index("zero-error gate")] != ("passed" if c["gate"]["passed"] else "FAILED"):
            problems.append(f"{label} {what} gate: markdown {row[0][-1]!r} != json {c['gate']!r}")
    return compared, problems


def compare_controller_restart(md, runs):
    """Every Controller restart row against controller_restart of its summary; (cells compared, problems)."""
    return compare_gated_section(md, runs, "controller_restart", ["run", "namespace", "pods"], RESTART_COLUMNS,
                                 "controller restart")


def compare_dataplane_scale(md, runs):
    """Every Data-plane scale row, and every row of its steps table, against dataplane_scale of its
    summary; (cells compared, problems)."""
    compared, problems = compare_gated_section(md, runs, "dataplane_scale", ["run", "Deployment", "mode"],
                                               DATAPLANE_COLUMNS, "data-plane scale")
    sections = [(label, d) for label, d in whole_runs_with(runs, "dataplane_scale") if d["steps"]]
    if not sections:
        return compared, problems
    headers, rows = find_table(md, ["run", "step", "replicas"])
    for label, d in sections:
        for st in d["steps"]:
            row = [r for r in rows if r[0] == label and r[1] == str(st["step"])]
            if len(row) != 1:
                problems.append(f"{label}: expected one row for data-plane step {st['step']}, found {len(row)}")
                continue
            compared += 1
            if row[0][headers.index("replicas")] != f"{'n/a' if st['from'] is None else st['from']} -> {st['to']}":
                problems.append(f"{label} data-plane step {st['step']} replicas: markdown {row[0][2]!r} != json {st}")
            for column, read in STEP_COLUMNS.items():
                compared += 1
                cell, want = row[0][headers.index(column)], read(st)
                if not (cell == "not Ready" if want is None and column.startswith("Ready") else same(cell, want)):
                    problems.append(f"{label} data-plane step {st['step']} {column}: markdown {cell!r} != json {want!r}")
    return compared, problems


# Controller upgrade table column -> how to read it from the summary's controller_upgrade (and its pods table's).
UPGRADE_COLUMNS = {
    "old pods terminating": lambda u: u["pods_terminating"], "new pods Ready": lambda u: u["pods_ready"],
    "requests lost": lambda u: u["requests_lost"],
}
POD_COLUMNS = {"old pod terminating (ms)": lambda st: st["old_terminating_ms"],
               "new pod Ready (ms)": lambda st: st["new_ready_ms"]}


def compare_controller_upgrade(md, runs):
    """Every Controller upgrade row (its rollout time too), and every row of its pods table, against
    controller_upgrade of its summary; (cells compared, problems)."""
    compared, problems = compare_gated_section(md, runs, "controller_upgrade", ["run", "workload", "change"],
                                               UPGRADE_COLUMNS, "controller upgrade")
    sections = whole_runs_with(runs, "controller_upgrade")
    if not sections:
        return compared, problems
    headers, rows = find_table(md, ["run", "workload", "change"])
    for label, u in sections:
        for r in (r for r in rows if r[0] == label):
            compared += 1
            cell = r[headers.index("rollout (ms)")]
            if not (cell == "not complete" if u["rollout_ms"] is None else same(cell, u["rollout_ms"])):
                problems.append(f"{label} controller upgrade rollout: markdown {cell!r} != json {u['rollout_ms']!r}")
    sections = [(label, u) for label, u in sections if u["steps"]]
    if not sections:
        return compared, problems
    headers, rows = find_table(md, ["run", "pod", "old pod terminating (ms)"])
    for label, u in sections:
        for st in u["steps"]:
            row = [r for r in rows if r[0] == label and r[1] == str(st["step"])]
            if len(row) != 1:
                problems.append(f"{label}: expected one row for controller pod {st['step']}, found {len(row)}")
                continue
            for column, read in POD_COLUMNS.items():
                compared += 1
                cell, want = row[0][headers.index(column)], read(st)
                if not same(cell, want):
                    problems.append(f"{label} controller pod {st['step']} {column}: markdown {cell!r} != json {want!r}")
    return compared, problems


def compare_routes(md, runs):
    """Every Routes row (run, kind) against routes.by_kind of its summary; (cells compared, problems)."""
    with_routes = whole_runs_with(runs, "routes")
    if not with_routes:
        return 0, []
    headers, rows = find_table(md, ["run", "experiment", "kind"])
    compared, problems = 0, []
    for label, routes in with_routes:
        for kind, k in routes["by_kind"].items():
            row = [r for r in rows if r[0] == label and r[2] == kind]
            if len(row) != 1:
                problems.append(f"{label} {kind}: expected one Routes row, found {len(row)}")
                continue
            for column, read in ROUTE_COLUMNS.items():
                compared += 1
                if not same(row[0][headers.index(column)], read(k)):
                    problems.append(f"{label} routes {kind} {column}: markdown {row[0][headers.index(column)]!r} "
                                    f"!= json {read(k)!r}")
    return compared, problems


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

#!/usr/bin/env python3
"""Turns the checker's report and k6's own counts into the dashboards test's assertions, one line
each: `ok<TAB>what`, `FAIL<TAB>what` (ci/test/dashboards.sh counts them), or prints one value.

  assertions.py panels REPORT [--queries]   one line per required panel (has data or not);
                                            --queries: one more line, "every query parses"
                                            (else a query error still prints a FAIL line)
  assertions.py value REPORT UID TITLE REF  summed instant values of one query of one panel
  assertions.py count EXPORT METRIC         a counter's count in a k6 --summary-export file
  assertions.py json FILE KEY[.KEY...]      one value of a JSON file (e.g. requests.total)
  assertions.py query PROMETHEUS EXPR       the summed value of an instant query (empty if no
                                            series), through the checker's Prometheus client
  assertions.py unittest FILE.py            runs a unittest file: one line per test (skips as
                                            SKIPPED); exit 1 if any failed or the file did not load
"""
import json
import pathlib
import sys
import traceback
import unittest


def panels(report_path, count_queries):
    report = json.load(open(report_path))
    lines = []
    for p in report["panels"]:
        if p.get("required"):
            state = "ok" if p["data"] else "FAIL"
            what = "has data" if p["data"] else "has no data"
            lines.append(f'{state}\tpanel {what}: {p["uid"]}/{p["title"]}')
    for sel in report.get("unmatched_selectors", []):
        lines.append(f"FAIL\t--require-data {sel!r} matches no panel")
    errors = report.get("query_errors", [])
    if errors:
        lines += [f"FAIL\tquery rejected by Prometheus: {e}" for e in errors]
    elif count_queries:
        n = sum(len(p["queries"]) for p in report["panels"])
        lines.append(f"ok\tevery query of every dashboard ({n}) accepted by Prometheus")
    if not any(p.get("required") for p in report["panels"]):
        lines.append("FAIL\tno panel was required to have data")
    print("\n".join(lines))


def value(report_path, uid, title, ref):
    for p in json.load(open(report_path))["panels"]:
        if p["uid"] == uid and p["title"] == title:
            for q in p["queries"]:
                if q["ref"] == ref:
                    print(int(round(sum(float(r["value"]) for r in q.get("result", [])))))
                    return
    sys.exit(f"no query {uid}/{title} {ref} in {report_path}")


def count(export_path, metric):
    m = json.load(open(export_path))["metrics"].get(metric)
    print(int(m["count"]) if m else 0)


def json_value(path, keys):
    v = json.load(open(path))
    for k in keys.split("."):
        v = v[k]
    print(v)


class LineResult(unittest.TestResult):
    """One assertion line per test; failure details on stderr."""

    def _line(self, state, test, note=""):
        print(f"{state}\tunit {type(test).__module__}: {test._testMethodName}{note}", flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line("ok", test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line("FAIL", test)
        print("".join(traceback.format_exception(*err)), file=sys.stderr)

    def addError(self, test, err):
        super().addError(test, err)
        self._line("FAIL", test, " (error)")
        print("".join(traceback.format_exception(*err)), file=sys.stderr)

    def addSubTest(self, test, subtest, err):
        # A failing subtest fails its test, which then gets no addSuccess: its line is this one.
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._line("FAIL", test, f" {subtest._subDescription()}")
            print("".join(traceback.format_exception(*err)), file=sys.stderr)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line("SKIPPED", test, f": {reason}")


def run_unittests(path):
    path = pathlib.Path(path).resolve()
    suite = unittest.defaultTestLoader.discover(str(path.parent), pattern=path.name)
    result = LineResult()
    suite.run(result)
    # A module that does not import shows up as an error of a stand-in test, counted above.
    return 0 if result.wasSuccessful() and result.testsRun else 1


def query(url, expr):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import check  # the checker's Prometheus client: one client for the whole harness
    r = check.Prometheus(url).query(expr, None, None, None, instant=True)
    if r.get("status") != "success":
        sys.exit(f"query {expr!r}: {r.get('error')}")
    result = r["data"]["result"]
    if result:
        total = sum(float(x["value"][1]) for x in result)
        print(int(total) if total.is_integer() else total)


def main(argv):
    cmd, args = (argv[0], argv[1:]) if argv else ("", [])
    if cmd == "panels" and len(args) in (1, 2):
        panels(args[0], args[1:] == ["--queries"])
    elif cmd == "value" and len(args) == 4:
        value(*args)
    elif cmd == "count" and len(args) == 2:
        count(*args)
    elif cmd == "json" and len(args) == 2:
        json_value(*args)
    elif cmd == "query" and len(args) == 2:
        query(*args)
    elif cmd == "unittest" and len(args) == 1:
        sys.exit(run_unittests(args[0]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Two values the shell helpers read (ci/test/dashboards/lib.sh, ci/tools/render-pictures.sh):

  assertions.py count EXPORT METRIC         a counter's count in a k6 --summary-export file
  assertions.py query PROMETHEUS EXPR       the summed value of an instant query (empty if no
                                            series), through the checker's Prometheus client
"""
import json
import sys


def count(export_path, metric):
    m = json.load(open(export_path))["metrics"].get(metric)
    print(int(m["count"]) if m else 0)


def query(url, expr):
    import check  # beside this file: the checker's Prometheus client, one client for the whole harness
    r = check.Prometheus(url).query(expr, None, None, None, instant=True)
    if r.get("status") != "success":
        sys.exit(f"query {expr!r}: {r.get('error')}")
    result = r["data"]["result"]
    if result:
        total = sum(float(x["value"][1]) for x in result)
        print(int(total) if total.is_integer() else total)


def main(argv):
    cmd, args = (argv[0], argv[1:]) if argv else ("", [])
    if cmd == "count" and len(args) == 2:
        count(*args)
    elif cmd == "query" and len(args) == 2:
        query(*args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""dashboards/generator/render.py DASHBOARD.json --prometheus URL ...: benchdashboards.render, which
draws a dashboard as SVG from its own queries. It needs benchreport (its Prometheus client)
importable: PYTHONPATH=dashboards/report, or the tools installed (pip install -e ., pyproject.toml)."""
import sys

try:
    from benchdashboards.render import main
except ModuleNotFoundError as e:
    if e.name != "benchreport":
        raise
    sys.exit("render.py: the benchreport package (its Prometheus client) is not importable; run "
             "PYTHONPATH=dashboards/report python3 dashboards/generator/render.py ... from the "
             "repository root, or install the tools: pip install -e . (pyproject.toml)")

if __name__ == "__main__":
    sys.exit(main())

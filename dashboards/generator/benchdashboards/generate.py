"""Writes the bench Grafana dashboards (dashboards/*.json) from one readable description.

The JSON files are the product (raw Grafana JSON, shipped by the chart as sidecar ConfigMaps);
this script is how they are written, so every panel follows the same conventions: datasource
variable `datasource`, `testid` variable, a unit on every panel, `$__rate_interval` in rates,
percentiles from native histograms merged across runners with `sum` before `histogram_quantile`.

Usage:
  generate.py            rewrite dashboards/*.json
  generate.py --check    exit 1 if a committed dashboard differs from what this script writes
"""
import argparse
import json
import pathlib
import sys

from .comparison import comparison
from .controllers import controllers
from .panels import OUT_DIR
from .run_overview import run_overview

DASHBOARDS = {"run-overview.json": run_overview, "controllers.json": controllers,
              "comparison.json": comparison}


def render(build):
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail if dashboards/*.json are not up to date")
    ap.add_argument("--out", type=pathlib.Path, default=OUT_DIR, help="output folder (default: dashboards/)")
    args = ap.parse_args(argv)
    stale = []
    for name, build in DASHBOARDS.items():
        path = args.out / name
        text = render(build)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.write_text(text)
            print(f"wrote {path}")
    if stale:
        print("out of date (run dashboards/generator/generate.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

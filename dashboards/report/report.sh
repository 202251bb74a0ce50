#!/usr/bin/env bash
# Writes a self-contained benchmark report (HTML with embedded SVG charts, Markdown, JSON) from one
# or more bench.summary/v1 files, optionally with time series from Prometheus.
# Usage: dashboards/report/report.sh --out DIR summary.json... [--prometheus URL] [--budget KEY=VALUE ...] [--direct TESTID]
#        dashboards/report/report.sh --help
. "$(dirname "$0")/../../lib/common.sh"
. "$BENCH_ROOT/dashboards/report/venv.sh"

ensure_report_venv
PYTHONPATH="$BENCH_ROOT/dashboards/report${PYTHONPATH:+:$PYTHONPATH}" exec "$REPORT_PYTHON" -m benchreport "$@"

#!/usr/bin/env bash
# The route experiments' tests are pytest modules now: ci/test/scenarios/routes/ (conftest.py says
# what they run against). This wrapper keeps ci/test/scenarios.sh's call working until the scenarios
# part runs on pytest and collects them itself; its closing line (from ci/test/conftest.py) is
# "routes: N passed, N failed, N skipped". ROUTES_KEEP_SUMMARIES=DIR keeps each k6 run's
# summary.json as DIR/<run>.json (e.g. for ci/test/report/testdata).
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/ci/lib/venv.sh"

ensure_venv test "$BENCH_ROOT/ci/test/requirements.txt"
# A temporary folder of its own, removed after (as ci/test/all.sh runs a pytest part).
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-pytest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$VENV_PYTHON" -m pytest --basetemp "$tmp/pytest" "$BENCH_ROOT/ci/test/scenarios/routes"

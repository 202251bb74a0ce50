# Sourced by dashboards/report/*.sh and the test harness after lib/common.sh.
# shellcheck source=../../lib/venv.sh
. "$BENCH_ROOT/lib/venv.sh"

# ensure_report_venv: the Python venv the report generator runs in, the project's one venv from the
# pinned requirements.txt (every wheel, its dependencies included: pip check passes with
# --no-deps), in $BENCH_CACHE (it survives fresh clones), linked as .tools/bench-venv. Sets
# REPORT_PYTHON; prints nothing on stdout.
ensure_report_venv() {
  ensure_venv bench "$BENCH_ROOT/requirements.txt"
  REPORT_PYTHON=$VENV_PYTHON
}

#!/usr/bin/env bash
# Runs every test part and prints one closing line: "parts: N passed, N failed".
# The parts run in two lanes at once: the local cluster's (cluster, e2e: one cluster per machine)
# and the rest (chart, scenarios, dashboards, report, then alone: a seeded random sample of their
# tests run one by one, ci/test/alone.sh), each lane cheapest part first. Much of a
# part's time is waiting (load runs of fixed length, pods starting, cold Go builds behind a lock),
# so the lanes overlap on 2 cores. A failing part does not stop the others, so one run shows
# every failure. Each part's output is printed whole when it ends (no interleaved lines).
# BENCH_TEST_PARTS overrides the list (e.g. "chart scenarios"); BENCH_TEST_SERIAL=1 runs one
# part at a time in the order given.
# A part is the script ci/test/<part>.sh, or else the pytest modules of ci/test/<part>/ (with its
# conftest.py).
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/lib/venv.sh"

CLUSTER_PARTS=" cluster e2e "

is_pytest_part() { [ ! -f "$BENCH_ROOT/ci/test/$1.sh" ] && [ -f "$BENCH_ROOT/ci/test/$1/conftest.py" ]; }

# run_part PART: the Debian packages the part runs, then its pytest modules in the pinned test
# venv, else its script. Installing up front is what lets a part run alone, first, on a new machine.
run_part() {
  # shellcheck disable=SC2046
  apt_install $(part_packages "$1") || return 1
  if is_pytest_part "$1"; then run_pytest "$BENCH_ROOT/ci/test/$1"; else bash "$BENCH_ROOT/ci/test/$1.sh"; fi
}

# run_pytest DIR: pytest with a temporary folder of its own, removed after (pytest's shared
# /tmp/pytest-of-<user> keeps only the newest three runs, and other clones run pytest too).
run_pytest() (
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-pytest.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  "$VENV_PYTHON" -m pytest --basetemp "$tmp/pytest" "$1"
)

# run_lane PART...: runs the parts one after the other, each part's status to
# $results/PART.status. With LANE_LOG=1 a part's output goes to $results/PART.log and is printed
# whole when the part ends; else it is printed as it comes.
run_lane() {
  local part t0 status
  for part in "$@"; do
    log "=== test part: $part"
    t0=$SECONDS
    : > "$results/$part.running"
    if [ "${LANE_LOG:-}" = 1 ]; then
      if run_part "$part" >"$results/$part.log" 2>&1; then status=passed; else status=FAILED; fi
      { flock 8; log "=== output of $part:"; cat "$results/$part.log"; } 8>"$results/print.lock" >&2
    else
      if run_part "$part"; then status=passed; else status=FAILED; fi
    fi
    echo "$status" > "$results/$part.status"
    rm -f "$results/$part.running"
    log "=== $part $status in $((SECONDS - t0)) s"
  done
}

parts=${BENCH_TEST_PARTS:-"chart scenarios dashboards report alone cluster e2e"}
results=$(mktemp -d "${TMPDIR:-/tmp}/bench-test-parts.XXXXXX")
trap 'rm -rf "$results"' EXIT
# The project's venv (pytest, the report's wheels) before the lanes: inside `if run_part` set -e is off, and a failed install must stop.
for part in $parts; do
  if is_pytest_part "$part"; then ensure_venv bench "$BENCH_ROOT/requirements.txt"; break; fi
done

cluster_lane=() other_lane=()
for part in $parts; do
  if [[ $CLUSTER_PARTS == *" $part "* ]]; then cluster_lane+=("$part"); else other_lane+=("$part"); fi
done
t0=$SECONDS
if [ "${BENCH_TEST_SERIAL:-}" = 1 ] || [ ${#cluster_lane[@]} -eq 0 ] || [ ${#other_lane[@]} -eq 0 ]; then
  # shellcheck disable=SC2086
  run_lane $parts
else
  log "lanes at once: [${other_lane[*]}] and [${cluster_lane[*]}]"
  # Both lanes at the same priority: each has load runs that fail on a starved runner (niced 10,
  # the other lane's k6 runs dropped iterations while the e2e ran).
  LANE_LOG=1 run_lane "${other_lane[@]}" & other_pid=$!
  LANE_LOG=1 run_lane "${cluster_lane[@]}" & cluster_pid=$!
  # A part's output comes when it ends: say every 5 min which parts are still running.
  while sleep 300; do
    running=""
    for f in "$results"/*.running; do [ -e "$f" ] && running+=" $(basename "$f" .running)"; done
    [ -z "$running" ] || log "still running:$running"
  done & monitor_pid=$!
  wait "$other_pid" "$cluster_pid"
  kill "$monitor_pid" 2>/dev/null || true  # the monitor only sleeps and prints
fi

passed=0 failed=0 failed_parts=()
for part in $parts; do
  if [ "$(cat "$results/$part.status" 2>/dev/null)" = passed ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); failed_parts+=("$part")
  fi
done
[ $failed -eq 0 ] || log "failed parts: ${failed_parts[*]}"
log "all parts in $((SECONDS - t0)) s"
echo "parts: $passed passed, $failed failed"
[ $failed -eq 0 ]

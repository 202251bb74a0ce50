#!/usr/bin/env bash
# Runs every test part in order and prints one closing line: "N passed, N failed".
# Parts run from cheapest to most expensive; a failing part does not stop the others, so one
# run shows every failure. BENCH_TEST_PARTS overrides the list (e.g. "chart scenarios").
. "$(dirname "$0")/../lib/common.sh"

parts=${BENCH_TEST_PARTS:-"chart scenarios dashboards report cluster e2e"}
passed=0 failed=0 failed_parts=()
for part in $parts; do
  log "=== test part: $part"
  t0=$SECONDS
  if bash "$BENCH_ROOT/ci/test/$part.sh"; then
    passed=$((passed + 1)); log "=== $part passed in $((SECONDS - t0)) s"
  else
    failed=$((failed + 1)); failed_parts+=("$part"); log "=== $part FAILED in $((SECONDS - t0)) s"
  fi
done
[ $failed -eq 0 ] || log "failed parts: ${failed_parts[*]}"
echo "parts: $passed passed, $failed failed"
[ $failed -eq 0 ]

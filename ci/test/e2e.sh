#!/usr/bin/env bash
# e2e part of the test command: the real dynamic benchmark on the local cluster, every assertion in
# ci/e2e/assert.sh. Installs what it needs (through ci/e2e/run.sh), uninstalls the
# release (that is one of the checks) and stops the cluster at the end unless BENCH_E2E_KEEP_CLUSTER=1.
# Closing line: "e2e: N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/common.sh"

stop_cluster() {
  local rc=$?
  if [ "${BENCH_E2E_KEEP_CLUSTER:-0}" != 1 ]; then
    bash "$BENCH_ROOT/ci/cluster/down.sh" >&2 || { log "ci/cluster/down.sh failed"; rc=1; }
  fi
  exit $rc
}
trap stop_cluster EXIT

t0=$SECONDS
out=$(mktemp)
rc=0
bash "$BENCH_ROOT/ci/e2e/run.sh" --assert | tee "$out" || rc=$?
if ! grep -q '^e2e: [0-9]* passed, [0-9]* failed, [0-9]* skipped$' "$out"; then
  # The harness died before its assertions: count that as one failed check, honestly.
  echo "e2e: 0 passed, 1 failed, 0 skipped"
  rc=1
fi
rm -f "$out"
log "e2e part took $((SECONDS - t0)) s"
exit $rc

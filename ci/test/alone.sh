#!/usr/bin/env bash
# The "alone" part: a random sample of the other pytest parts' tests, each run by itself in a pytest
# process of its own (ci/test/alone.py): any test must pass alone, not only after the tests before it.
# BENCH_TEST_ALONE_SEED draws a given sample again (each run prints its seed), BENCH_TEST_ALONE_COUNT
# sets its size (alone.py --count), BENCH_TEST_ALONE_PARTS the parts drawn from. The cluster parts
# are left out: each of their tests holds the machine's one cluster for minutes.
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/lib/venv.sh"

parts=${BENCH_TEST_ALONE_PARTS:-"chart scenarios dashboards report"}
for part in $parts; do
  # shellcheck disable=SC2046
  apt_install $(part_packages "$part")
done
ensure_venv bench "$BENCH_ROOT/requirements.txt"
# shellcheck disable=SC2086
"$VENV_PYTHON" "$BENCH_ROOT/ci/test/alone.py" $parts

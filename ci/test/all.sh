#!/usr/bin/env bash
# Runs every test part in order and prints one closing line: "N passed, N failed".
# Parts run from cheapest to most expensive; a failing part does not stop the others, so one
# run shows every failure. BENCH_TEST_PARTS overrides the list (e.g. "chart scenarios").
# A part is the script ci/test/<part>.sh, or else the pytest modules of ci/test/<part>/ (with its
# conftest.py; the chart part so far).
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/ci/lib/venv.sh"

is_pytest_part() { [ ! -f "$BENCH_ROOT/ci/test/$1.sh" ] && [ -f "$BENCH_ROOT/ci/test/$1/conftest.py" ]; }

# part_packages PART: the Debian packages ci/test/<part>/packages.txt lists (comments dropped).
part_packages() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$BENCH_ROOT/ci/test/$1/packages.txt"; }

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

parts=${BENCH_TEST_PARTS:-"chart scenarios dashboards report cluster e2e"}
passed=0 failed=0 failed_parts=()
# The test venv before the loop: inside `if run_part` set -e is off, and a failed install must stop.
for part in $parts; do
  if is_pytest_part "$part"; then ensure_venv test "$BENCH_ROOT/ci/test/requirements.txt"; break; fi
done
for part in $parts; do
  log "=== test part: $part"
  t0=$SECONDS
  if run_part "$part"; then
    passed=$((passed + 1)); log "=== $part passed in $((SECONDS - t0)) s"
  else
    failed=$((failed + 1)); failed_parts+=("$part"); log "=== $part FAILED in $((SECONDS - t0)) s"
  fi
done
[ $failed -eq 0 ] || log "failed parts: ${failed_parts[*]}"
echo "parts: $passed passed, $failed failed"
[ $failed -eq 0 ]

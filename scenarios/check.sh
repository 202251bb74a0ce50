#!/usr/bin/env bash
# Checks an entry script offline, the way the chart's TestRun will take it, before it goes near a
# cluster: no root, no Kubernetes API, no target. `make check-scenario FILE=scenarios/my.js`.
#   1. plan      `k6 inspect --execution-requirements`, as k6-operator's initializer runs it: the
#                script loads, its settings validate (a bad value fails here, naming it), and the
#                plan is printed (scenarios, VU ceiling, duration)
#   2. start-up  k6 loads it with no warning (a deprecated module) and no transform step
#   3. warm-up   with BENCH_WARMUP=2s the plan starts with the warm-up, or the script refuses one
#                by name ("takes no warm-up")
#   4. archive   `k6 archive`, the initializer's other step
#   5. memory    the live heap a runner needs at the plan's VU ceiling, by the chart's sizing
#                (scenarios/contract.json runnerMemory), against the default runner's GOMEMLIMIT
# Usage: scenarios/check.sh FILE [-e KEY=VALUE]...   (-e: the script's environment, as k6 takes it;
# BENCH_TARGET_URL defaults to an address nothing is sent to: only the plan is read)
. "$(dirname "$0")/../lib/common.sh"

[ $# -ge 1 ] || die "usage: scenarios/check.sh FILE [-e KEY=VALUE]..."
file=$1; shift
[ -f "$file" ] || die "no such script: $file"
file=$(realpath "$file")
env_args=(-e BENCH_TARGET_URL=http://127.0.0.1:9)
while [ $# -gt 0 ]; do
  [ "$1" = -e ] && [[ ${2:-} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "expected -e KEY=VALUE, got: $*"
  env_args+=(-e "$2"); shift 2
done

k6=$(bash "$BENCH_ROOT/scenarios/runner/build.sh")
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
pass() { printf 'ok    %-9s %s\n' "$1" "$2"; }
fail() { printf 'FAIL  %-9s %s\n' "$1" "$2"; failed=$((failed + 1)); }

# 1. the plan, as the initializer reads it
if "$k6" inspect --execution-requirements "${env_args[@]}" "$file" >"$work/plan.json" 2>"$work/plan.log"; then
  pass plan "$(python3 "$BENCH_ROOT/scenarios/check_plan.py" describe "$work/plan.json")"
else
  fail plan "k6 inspect failed, as the TestRun's initializer would:"
  sed 's/^/      /' "$work/plan.log" "$work/plan.json" | tail -n 20
fi

# 2. start-up: what k6 logs while it loads the script
"$k6" inspect -v "${env_args[@]}" "$file" >/dev/null 2>"$work/start.log" || true
warned=$(grep -E 'level=warning|Babel|[Tt]ranspil' "$work/start.log" | head -n 3 || true)
if [ -z "$warned" ]; then pass start-up "no warning, nothing transformed"; else fail start-up "k6 said: $warned"; fi

# 3. warm-up
if "$k6" inspect --execution-requirements "${env_args[@]}" -e BENCH_WARMUP=2s "$file" >"$work/warm.json" 2>&1; then
  if why=$(python3 "$BENCH_ROOT/scenarios/check_plan.py" warmup "$work/warm.json" "$BENCH_ROOT/scenarios/contract.json"); then
    pass warm-up "$why"
  else
    fail warm-up "$why"
  fi
elif grep -q 'takes no warm-up' "$work/warm.json"; then
  pass warm-up "refused by name (the script takes no warm-up)"
else
  fail warm-up "BENCH_WARMUP=2s failed otherwise than by a refusal: $(tail -n 3 "$work/warm.json")"
fi

# 4. the archive the initializer makes
if (cd "$work" && "$k6" archive "${env_args[@]}" -O archive.tar "$file" >archive.log 2>&1); then
  pass archive "k6 archive: $(du -h "$work/archive.tar" | cut -f1)"
else
  fail archive "k6 archive failed: $(tail -n 3 "$work/archive.log")"
fi

# 5. memory at the VU ceiling
if [ -s "$work/plan.json" ] && why=$(python3 "$BENCH_ROOT/scenarios/check_plan.py" memory "$work/plan.json" \
    "$BENCH_ROOT/scenarios/contract.json" "$BENCH_ROOT/charts/bench/values.yaml"); then
  pass memory "$why"
else
  fail memory "${why:-no plan to size}"
fi

if [ "$failed" -gt 0 ]; then
  echo "check-scenario: $file: $failed of 5 checks failed"
  exit 1
fi
echo "check-scenario: $file: 5 checks passed"

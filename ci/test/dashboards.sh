#!/usr/bin/env bash
# Dashboards part (fast tier): the dashboards are up to date with their generator, follow bench's
# conventions and grafana/dashboard-linter's rules (lint.py), conform to the dashboard schema Grafana
# publishes (npm @grafana/schema, schema_check.py), each rule and the schema shown to reject a
# broken copy (unit tests), and every query runs against a real
# Prometheus 2.42 (remote-write receiver, native histograms) holding real k6 data: a real k6 v0.51
# run against the backend nginx on 127.0.0.1, with errors, timeouts and dropped iterations provoked
# for real. Churn telemetry (replicas, scale events, convergence) is simulated by the k6 script: no
# cluster in this tier; the e2e run checks those panels against real churn.
# Every counted line is one assertion that can fail: a panel with data, a total equal to k6's own
# count, a unit test; a command that exits non-zero is never hidden behind passing lines.
# Closing line: `dashboards: N passed, N failed, N skipped`.
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/ci/test/dashboards/lib.sh"

PASSED=0
FAILED=0
SKIPPED=0
WORK=$(mktemp -d /tmp/bench-dashboards.XXXXXX)
CHECK="$BENCH_ROOT/ci/test/dashboards/check.py"
ASSERT="$BENCH_ROOT/ci/test/dashboards/assertions.py"

cleanup() {
  stop_started_processes
  rm -rf "$WORK"
}
trap cleanup EXIT

pass() { PASSED=$((PASSED + 1)); printf 'ok    %s\n' "$*"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL  %s\n' "$*"; }
skip() { SKIPPED=$((SKIPPED + 1)); printf 'SKIPPED  %s\n' "$*"; }

# record: counts assertion lines from stdin (`ok<TAB>what`, `FAIL<TAB>what`, `SKIPPED<TAB>what`);
# prints how many failed, so a caller can tell whether a non-zero exit was already reported.
record() {
  local state what failed=0
  while IFS=$'\t' read -r state what; do
    case $state in
      ok) pass "$what" ;;
      FAIL) fail "$what"; failed=$((failed + 1)) ;;
      SKIPPED) skip "$what" ;;
      *) fail "unreadable assertion line: $state $what"; failed=$((failed + 1)) ;;
    esac
  done
  echo "$failed" > "$WORK/record.failed"
}

# checked_panels WHAT STATUS REPORT LOG [--queries]: the per-panel assertions of one checker run
# (its report); a non-zero STATUS that no failing line explains is one more failure, with the log.
checked_panels() {
  local what=$1 status=$2 report=$3 log=$4; shift 4
  if [ ! -s "$report" ]; then
    fail "$what: the checker wrote no report (exit $status)"; sed 's/^/      /' "$log"; return
  fi
  record < <(python3 "$ASSERT" panels "$report" "$@")
  if [ "$status" -ne 0 ] && [ "$(cat "$WORK/record.failed")" -eq 0 ]; then
    fail "$what: the checker exited $status with every panel assertion passing"; sed 's/^/      /' "$log"
  fi
}

# expect WHAT CMD...: the command must succeed; its output is shown on failure.
expect() {
  local what=$1; shift
  if "$@" > "$WORK/out.log" 2>&1; then pass "$what"; else fail "$what"; sed 's/^/      /' "$WORK/out.log"; fi
}

# expect_failure WHAT MESSAGE CMD...: the command must fail and print MESSAGE.
expect_failure() {
  local what=$1 message=$2; shift 2
  if "$@" > "$WORK/out.log" 2>&1; then
    fail "$what (it succeeded)"; sed 's/^/      /' "$WORK/out.log"
  elif grep -qF -- "$message" "$WORK/out.log"; then
    pass "$what"
  else
    fail "$what (no '$message')"; sed 's/^/      /' "$WORK/out.log"
  fi
}

install_dependencies() {
  apt_install prometheus nginx-light curl
  bash "$BENCH_ROOT/scenarios/runner/build.sh" > /dev/null
  command -v k6 > /dev/null || die "k6 is not on PATH after scenarios/runner/build.sh"
}

# run_assertions WHAT CMD...: CMD prints assertion lines (see record) on stdout, details on
# stderr; a non-zero exit that no FAIL line explains is one failure of its own.
run_assertions() {
  local what=$1 status=0; shift
  "$@" > "$WORK/assertions.lines" 2> "$WORK/assertions.log" || status=$?
  record < "$WORK/assertions.lines"
  if [ "$status" -ne 0 ]; then
    [ "$(cat "$WORK/record.failed")" -gt 0 ] || fail "$what exited $status without a failing assertion"
    sed 's/^/      /' "$WORK/assertions.log"
  fi
}

# install_schema_tools: @grafana/schema and tsc from npm (ci/tools/grafana-schema.sh); where npm's
# registry cannot be reached the schema checks are SKIPPED with the reason, never silently dropped.
install_schema_tools() {
  GRAFANA_SCHEMA_TOOLS=""
  if GRAFANA_SCHEMA_TOOLS=$(bash "$BENCH_ROOT/ci/tools/grafana-schema.sh" 2> "$WORK/npm.log"); then
    export GRAFANA_SCHEMA_TOOLS
  else
    skip "dashboards against @grafana/schema: ci/tools/grafana-schema.sh could not install it ($(tail -n 1 "$WORK/npm.log"))"
  fi
}

check_generated_and_conventions() {
  expect "dashboards/*.json are what dashboards/generator/generate.py writes" \
    python3 "$BENCH_ROOT/dashboards/generator/generate.py" --check
  expect "bench conventions hold for every dashboard (check.py offline)" python3 "$CHECK"
  # grafana/dashboard-linter's rules: one assertion per rule, over every dashboard.
  run_assertions "lint.py" python3 "$BENCH_ROOT/ci/test/dashboards/lint.py"
  # Grafana's published schema: one assertion per dashboard (the dashboard and its panels' options).
  install_schema_tools
  if [ -n "$GRAFANA_SCHEMA_TOOLS" ]; then
    run_assertions "schema_check.py" python3 "$BENCH_ROOT/ci/test/dashboards/schema_check.py" \
      --tools "$GRAFANA_SCHEMA_TOOLS" --assertions
  fi
  # One assertion per unit test: broken dashboards are rejected with their message (checker
  # conventions, each linter rule, the schema), CLI errors are clear.
  local tests
  for tests in test_check.py test_lint.py; do
    run_assertions "$tests" python3 "$ASSERT" unittest "$BENCH_ROOT/ci/test/dashboards/$tests"
  done
}

# query_value EXPR: the value of an instant query against this part's Prometheus (empty if none).
query_value() { prom_query_value "$PROM" "$1"; }

# summary_count FILE METRIC: a counter's total from a k6 --summary-export file.
summary_count() { python3 "$ASSERT" count "$1" "$2"; }

# report_value REPORT UID TITLE REF: the summed values of an instant query in the checker's report.
report_value() { python3 "$ASSERT" value "$@"; }

# equal WHAT GOT WANT: one assertion; WANT must be a positive count (a zero would prove nothing).
equal() {
  if [ "$3" -gt 0 ] 2>/dev/null && [ "$2" = "$3" ]; then pass "$1 ($3)"; else fail "$1: got '${2}', want '${3}' (> 0)"; fi
}

run_k6_data() {
  local stall_port rc=0
  NGINX_PORT=$(free_port); stall_port=$(free_port)
  start_backend_nginx "$WORK" "$NGINX_PORT"
  start_stall_server "$stall_port"
  TESTID="dash-$(date +%s)"
  RUN_START=$(date +%s)
  log "k6 run $TESTID: 30 s at 50 req/s against nginx 127.0.0.1:$NGINX_PORT, remote write to $PROM"
  BENCH_TARGET_URL="http://127.0.0.1:$NGINX_PORT" BENCH_CLOSED_URL="http://127.0.0.1:$(free_port)" \
  BENCH_STALL_URL="http://127.0.0.1:$stall_port" BENCH_RATE=50 BENCH_DURATION=30s \
    run_k6_remote_write "$PROM_PORT" "$TESTID" "$BENCH_ROOT/ci/test/dashboards/testdata/emit.js" \
      --summary-export "$WORK/summary.json" > "$WORK/k6.log" 2>&1 || rc=$?
  # emit.js has no threshold that can fail (its dropped iterations are the point): exit 0 expected.
  # Every check below reads this run's data, so without it the part stops here.
  if [ "$rc" -ne 0 ]; then
    fail "testdata/emit.js ran with remote write (k6 exit $rc, want 0)"; sed 's/^/      /' "$WORK/k6.log"
    return 1
  fi
  pass "testdata/emit.js ran with remote write (k6 exit 0)"
  wait_for_prom_value "$PROM" "sum(k6_http_reqs_total{testid=\"$TESTID\"})" \
    "$(summary_count "$WORK/summary.json" http_reqs)" 30 || true # the totals checks below show any gap
}

check_series_names() {
  # Every k6 name in the fixture exists in Prometheus for this run: the fixture is what k6 writes.
  local name
  for name in $(python3 -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["sources"]["k6"]["metrics"]))' \
      "$BENCH_ROOT/ci/test/dashboards/fixtures/metrics.json"); do
    if [ -n "$(query_value "count($name{testid=\"$TESTID\"})")" ]; then
      pass "remote write produced $name for testid $TESTID"
    else
      fail "remote write produced no $name for testid $TESTID"
    fi
  done
}

# One assertion per required panel (every k6-fed panel and the route panels) and one for every
# query of every dashboard being accepted by Prometheus; then the dashboards' totals against k6's.
check_queries_against_prometheus() {
  local report="$WORK/report.json" status=0
  python3 "$CHECK" --quiet --prometheus "$PROM" --testid "$TESTID" --start "$((RUN_START - 60))" \
    --end now --require-data @k6,@routes --report "$report" > "$WORK/check.log" 2>&1 || status=$?
  checked_panels "checker against Prometheus" "$status" "$report" "$WORK/check.log" --queries
  [ -s "$report" ] || return 0

  # The dashboards' totals equal what k6 itself counted.
  local k6_reqs k6_all_reqs k6_errors dash_errors=0 ref
  k6_reqs=$(summary_count "$WORK/summary.json" 'http_reqs{role:load}')
  k6_all_reqs=$(summary_count "$WORK/summary.json" http_reqs)
  k6_errors=$(summary_count "$WORK/summary.json" bench_errors)
  # The churn VU's probe requests are there to be left out: without them the next check proves less.
  if [ "$k6_all_reqs" -gt "$k6_reqs" ]; then
    pass "the run has churn probe requests ($((k6_all_reqs - k6_reqs))) besides the load ($k6_reqs)"
  else
    fail "no churn probe requests: http_reqs $k6_all_reqs, http_reqs{role:load} $k6_reqs"
  fi
  equal "results table requests = k6 summary http_reqs{role:load}" \
    "$(report_value "$report" bench-comparison "Results by run" F)" "$k6_reqs"
  for ref in G H I J K L; do
    dash_errors=$((dash_errors + $(report_value "$report" bench-comparison "Results by run" "$ref")))
  done
  equal "results table errors (6 classes) = k6 summary bench_errors" "$dash_errors" "$k6_errors"
  equal "run overview error stat = k6 summary bench_errors" \
    "$(report_value "$report" bench-run-overview "Errors in range by class" A)" "$k6_errors"
  equal "results table dropped = k6 summary dropped_iterations" \
    "$(report_value "$report" bench-comparison "Results by run" M)" "$(summary_count "$WORK/summary.json" dropped_iterations)"
  local timeouts
  timeouts=$(query_value "sum(max_over_time(k6_bench_errors_total{testid=\"$TESTID\",class=\"timeout\"}[10m]))")
  if [ "${timeouts:-0}" != 0 ]; then pass "timeouts provoked for real ($timeouts)"; else fail "no timeout errors in the run"; fi
}

# The real static scenario (scenarios/static.js) feeds the load, latency and error panels too: its
# metric names and tags are the ones the dashboards expect.
check_real_static_scenario() {
  local testid="dash-static-$(date +%s)" start rc=0
  start=$(date +%s)
  mkdir -p "$WORK/static"
  BENCH_TARGET_URL="http://127.0.0.1:$NGINX_PORT" BENCH_RATE=100 BENCH_DURATION=10s BENCH_CONNECTIONS=50 \
    BENCH_TESTID="$testid" BENCH_SUMMARY_DIR="$WORK/static" \
    run_k6_remote_write "$PROM_PORT" "$testid" "$BENCH_ROOT/scenarios/static.js" > "$WORK/static/k6.log" 2>&1 || rc=$?
  # 100 req/s with 50 connections against local nginx holds its rate: exit 0 expected. 99 is the
  # scenario's threshold (iterations dropped), a failed run; the panel checks below still run on
  # what it wrote, so one cause shows once.
  case $rc in
    0) pass "scenarios/static.js ran against nginx with remote write (k6 exit 0)" ;;
    99) fail "scenarios/static.js held its rate (k6 exit 99, want 0: $(python3 "$ASSERT" json "$WORK/static/summary.json" requests.dropped_iterations 2>&1) dropped iterations)" ;;
    *) fail "scenarios/static.js run (k6 exit $rc, want 0)"; sed 's/^/      /' "$WORK/static/k6.log"; return ;;
  esac
  wait_for_prom_value "$PROM" "sum(k6_http_reqs_total{testid=\"$testid\", role=\"load\"})" \
    "$(python3 "$ASSERT" json "$WORK/static/summary.json" requests.total)" 30 || true # checked below
  local panels=(
    "bench-run-overview/Request rate*" "bench-run-overview/Dropped iterations" "bench-run-overview/VUs*"
    "bench-run-overview/Latency*" "bench-run-overview/p99 latency by path" "bench-run-overview/Responses by HTTP status"
    "bench-run-overview/Errors*" "bench-run-overview/Error ratio" "bench-run-overview/Data sent and received"
    "bench-comparison/Results by run" "bench-comparison/Tail latency by run" "bench-comparison/Latency by percentile"
    "bench-comparison/Achieved request rate by run" "bench-comparison/Errors*" "bench-comparison/p99 by run")
  local IFS=, status=0
  python3 "$CHECK" --quiet --prometheus "$PROM" --testid "$testid" --start "$((start - 30))" \
    --require-data "${panels[*]}" --report "$WORK/static/report.json" > "$WORK/static/check.log" 2>&1 || status=$?
  unset IFS
  checked_panels "checker on scenarios/static.js" "$status" "$WORK/static/report.json" "$WORK/static/check.log"
  [ -s "$WORK/static/report.json" ] || return 0
  # A clean run still has a series per error class (started at 0 in setup): panels read 0, not "no data".
  local classes error_sum
  classes=$(query_value "count(count by (class) (k6_bench_errors_total{testid=\"$testid\"}))")
  error_sum=$(query_value "sum(k6_bench_errors_total{testid=\"$testid\"})")
  if [ "$classes" = 6 ] && [ "$error_sum" = 0 ]; then
    pass "static scenario: all 6 error classes have a series, at 0 (a clean run)"
  else
    fail "static scenario: error classes with a series: ${classes:-none} (want 6), their sum: ${error_sum:-none} (want 0)"
  fi
  equal "static scenario: results table requests = summary.json requests.total" \
    "$(report_value "$WORK/static/report.json" bench-comparison "Results by run" F)" \
    "$(python3 "$ASSERT" json "$WORK/static/summary.json" requests.total)"
}

# The README picture is rendered from the dashboards' own queries: every run-overview panel draws.
check_render() {
  local svg="$WORK/run-overview.svg" lines empty
  if ! python3 "$BENCH_ROOT/dashboards/generator/render.py" "$BENCH_ROOT/dashboards/run-overview.json" \
      --prometheus "$PROM" --testid "$TESTID" --start "$((RUN_START - 10))" --end now --out "$svg" > "$WORK/render.log" 2>&1; then
    fail "render.py draws run-overview from its queries"; sed 's/^/      /' "$WORK/render.log"; return
  fi
  lines=$(python3 -c 'import sys; print(open(sys.argv[1]).read().count("<polyline"))' "$svg")
  empty=$(python3 -c 'import sys; print(open(sys.argv[1]).read().count(">No data<"))' "$svg")
  if [ "$lines" -ge 15 ] && [ "$empty" -eq 0 ]; then
    pass "render.py draws run-overview from its queries: $lines lines, no empty panel"
  else
    fail "render.py draws run-overview from its queries: $lines lines (want >= 15), $empty empty panels"
  fi
}

# Traefik panels against a real Traefik v3.6.12 (no cluster): verify-traefik.sh builds Traefik when
# it is not cached (the scenarios part usually has by now: one build, shared through its lock).
# One assertion per required panel (the Traefik panels and the controller view's run panels) and
# one for the configuration reloads; a failure before those (build, k6 run) is one failure.
check_traefik_panels() {
  local dir="$WORK/traefik" status=0 reloads
  mkdir -p "$dir"
  bash "$BENCH_ROOT/ci/test/dashboards/verify-traefik.sh" --results "$dir" > "$dir/verify.log" 2>&1 || status=$?
  if [ ! -s "$dir/report.json" ]; then
    fail "Traefik v3.6.12 with real churn: verify-traefik.sh stopped before its checks (exit $status)"
    sed 's/^/      /' "$dir/verify.log"; return
  fi
  checked_panels "Traefik panels" 0 "$dir/report.json" "$dir/verify.log"
  reloads=$(cat "$dir/reloads" 2>/dev/null || echo 0)
  if [ "$reloads" -ge 5 ]; then
    pass "Traefik: $reloads configuration reloads from 6 server-list changes (want >= 5)"
  else
    fail "Traefik: $reloads configuration reloads from 6 server-list changes (want >= 5)"
  fi
  if [ "$status" -ne 0 ] && [ "$(cat "$WORK/record.failed")" -eq 0 ] && [ "$reloads" -ge 5 ]; then
    fail "verify-traefik.sh exited $status with every check passing"; sed 's/^/      /' "$dir/verify.log"
  fi
}

check_failure_paths() {
  expect_failure "data check fails for a run that does not exist" "returned no data for testid no-such-run" \
    python3 "$CHECK" --quiet --prometheus "$PROM" --testid no-such-run --start "$((RUN_START - 60))" \
      --require-data @k6
  mkdir -p "$WORK/broken"
  python3 - "$BENCH_ROOT/dashboards/run-overview.json" "$WORK/broken/run-overview.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = next(p for p in d["panels"] if p.get("targets"))
p["targets"][0]["expr"] = p["targets"][0]["expr"].rstrip(")")  # unbalanced parentheses
json.dump(d, open(sys.argv[2], "w"))
PY
  expect_failure "Prometheus rejects a query with a syntax error" "query error: run-overview.json panel" \
    python3 "$CHECK" --quiet "$WORK/broken" --prometheus "$PROM" --testid "$TESTID"
  expect_failure "a selector that matches no panel fails" "matches no panel" \
    python3 "$CHECK" --quiet --prometheus "$PROM" --testid "$TESTID" --require-data "bench-run-overview/No such panel"
  expect_failure "an unknown preset is named" "--require-data preset '@nginx' is unknown; presets: @k6, @routes, @traefik, @cadvisor" \
    python3 "$CHECK" --quiet --prometheus "$PROM" --testid "$TESTID" --require-data @nginx
}

main() {
  local t0=$SECONDS
  install_dependencies
  check_generated_and_conventions
  PROM_PORT=$(free_port)
  PROM="http://127.0.0.1:$PROM_PORT"
  start_prometheus "$WORK" "$PROM_PORT"
  # Everything but the Traefik check reads the emit.js run's data.
  if run_k6_data; then
    check_series_names
    check_queries_against_prometheus
    check_real_static_scenario
    check_render
    check_failure_paths
  fi
  check_traefik_panels
  log "dashboards test took $((SECONDS - t0)) s"
  echo "dashboards: $PASSED passed, $FAILED failed, $SKIPPED skipped"
  [ "$FAILED" -eq 0 ]
}

main "$@"

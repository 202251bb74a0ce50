#!/usr/bin/env bash
# Dashboards part (fast tier): the dashboards are up to date with their generator, follow the
# conventions (checker unit tests, broken copies rejected), and every query runs against a real
# Prometheus 2.42 (remote-write receiver, native histograms) holding real k6 data: a real k6 v0.51
# run against the backend nginx on 127.0.0.1, with errors, timeouts and dropped iterations provoked
# for real. Churn telemetry (replicas, scale events, convergence) is simulated by the k6 script: no
# cluster in this tier; the e2e run checks those panels against real churn.
# Closing line: `dashboards: N passed, N failed`.
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/ci/test/dashboards/lib.sh"

PASSED=0
FAILED=0
SKIPPED=0
WORK=$(mktemp -d /tmp/bench-dashboards.XXXXXX)
CHECK="$BENCH_ROOT/ci/test/dashboards/check.py"

cleanup() {
  stop_started_processes
  rm -rf "$WORK"
}
trap cleanup EXIT

pass() { PASSED=$((PASSED + 1)); printf 'ok    %s\n' "$*"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL  %s\n' "$*"; }
skip() { SKIPPED=$((SKIPPED + 1)); printf 'SKIPPED  %s\n' "$*"; }

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
  bash "$BENCH_ROOT/ci/k6/build.sh" > /dev/null
  command -v k6 > /dev/null || die "k6 is not on PATH after ci/k6/build.sh"
}

check_generated_and_conventions() {
  expect "dashboards/*.json are what dashboards/generator/generate.py writes" \
    python3 "$BENCH_ROOT/dashboards/generator/generate.py" --check
  expect "conventions hold for every dashboard (offline checker)" python3 "$CHECK"
  # One check per unit test: broken dashboards are rejected with their message, CLI errors are clear.
  local unit_status=0 line
  python3 -m unittest -v "$BENCH_ROOT/ci/test/dashboards/test_check.py" > "$WORK/unit.log" 2>&1 || unit_status=$?
  while IFS= read -r line; do
    case $line in
      *" ... ok") pass "checker unit: ${line%% (*}" ;;
      *" ... FAIL" | *" ... ERROR") fail "checker unit: ${line%% (*}" ;;
    esac
  done < "$WORK/unit.log"
  if [ "$unit_status" -ne 0 ] || ! grep -q '^OK$' "$WORK/unit.log"; then
    fail "checker unit tests (see below)"; sed 's/^/      /' "$WORK/unit.log"
  fi
}

# query_value EXPR: the single value of an instant query (empty if no result).
query_value() {
  curl -fsS "$PROM/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}

# summary_count FILE METRIC: a counter's total from a k6 --summary-export file.
summary_count() {
  python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["metrics"].get(sys.argv[2]); print(int(m["count"]) if m else 0)' "$1" "$2"
}

# report_value REPORT UID TITLE REF: the summed values of an instant query in the checker's report.
report_value() {
  python3 - "$@" <<'PY'
import json, sys
report, uid, title, ref = sys.argv[1:]
for p in json.load(open(report))["panels"]:
    if p["uid"] == uid and p["title"] == title:
        for q in p["queries"]:
            if q["ref"] == ref:
                print(int(round(sum(float(r["value"]) for r in q.get("result", [])))))
                sys.exit(0)
sys.exit(f"no query {uid}/{title} {ref} in {report}")
PY
}

run_k6_data() {
  local stall_port
  NGINX_PORT=$(free_port); stall_port=$(free_port)
  start_backend_nginx "$WORK" "$NGINX_PORT"
  start_stall_server "$stall_port"
  TESTID="dash-$(date +%s)"
  RUN_START=$(date +%s)
  log "k6 run $TESTID: 30 s at 50 req/s against nginx 127.0.0.1:$NGINX_PORT, remote write to $PROM"
  BENCH_TARGET_URL="http://127.0.0.1:$NGINX_PORT" BENCH_CLOSED_URL="http://127.0.0.1:$(free_port)" \
  BENCH_STALL_URL="http://127.0.0.1:$stall_port" BENCH_RATE=50 BENCH_DURATION=30s \
    run_k6_remote_write "$PROM_PORT" "$TESTID" "$BENCH_ROOT/ci/test/dashboards/testdata/emit.js" \
      --summary-export "$WORK/summary.json" > "$WORK/k6.log" 2>&1 ||
    { sed 's/^/      /' "$WORK/k6.log"; die "k6 run failed"; }
  sleep 2 # last remote-write push
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

check_queries_against_prometheus() {
  local report="$WORK/report.json"
  if python3 "$CHECK" --quiet --prometheus "$PROM" --testid "$TESTID" --start "$((RUN_START - 60))" \
      --end now --require-data @k6,@routes --report "$report" > "$WORK/check.log" 2>&1; then
    pass "checker: every query parses in Prometheus 2.42 and every k6 panel has data"
  else
    fail "checker against Prometheus"; sed 's/^/      /' "$WORK/check.log"
  fi
  [ -s "$report" ] || { fail "checker wrote no report"; return; }
  # One check per required panel, from the report.
  local line
  while IFS= read -r line; do
    case $line in
      data*) pass "panel has data: ${line#data }" ;;
      *) fail "panel has no data: ${line#nodata }" ;;
    esac
  done < <(python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["panels"]:
    if p.get("required"):
        print(("data " if p["data"] else "nodata ") + p["uid"] + "/" + p["title"])' "$report")
  local syntax_errors
  syntax_errors=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["query_errors"]))' "$report")
  if [ "$syntax_errors" = 0 ]; then pass "all queries (controllers included) accepted by Prometheus"; else fail "$syntax_errors query errors"; fi

  # The dashboards' totals equal what k6 itself counted.
  local k6_reqs k6_errors dash_reqs dash_errors dash_stat
  k6_reqs=$(summary_count "$WORK/summary.json" 'http_reqs{role:load}')
  k6_errors=$(summary_count "$WORK/summary.json" bench_errors)
  local k6_all_reqs
  k6_all_reqs=$(summary_count "$WORK/summary.json" http_reqs)
  # The churn VU's probe requests are there to be left out: the comparison below can fail.
  if [ "$k6_all_reqs" -gt "$k6_reqs" ]; then
    pass "the run has churn probe requests ($((k6_all_reqs - k6_reqs))) besides the load ($k6_reqs)"
  else
    fail "no churn probe requests: http_reqs $k6_all_reqs, http_reqs{role:load} $k6_reqs"
  fi
  dash_reqs=$(report_value "$report" bench-comparison "Results by run" F)
  dash_errors=0
  local ref
  for ref in G H I J K L; do
    dash_errors=$((dash_errors + $(report_value "$report" bench-comparison "Results by run" "$ref")))
  done
  dash_stat=$(report_value "$report" bench-run-overview "Errors in range by class" A)
  if [ "$k6_reqs" -gt 0 ] && [ "$dash_reqs" = "$k6_reqs" ]; then
    pass "results table requests = k6 summary http_reqs{role:load} ($k6_reqs)"
  else
    fail "results table requests $dash_reqs != k6 summary http_reqs{role:load} $k6_reqs"
  fi
  if [ "$k6_errors" -gt 0 ] && [ "$dash_errors" = "$k6_errors" ] && [ "$dash_stat" = "$k6_errors" ]; then
    pass "results table and error stat = k6 summary bench_errors ($k6_errors)"
  else
    fail "errors: table $dash_errors, stat $dash_stat, k6 summary $k6_errors"
  fi
  local k6_dropped dash_dropped
  k6_dropped=$(summary_count "$WORK/summary.json" dropped_iterations)
  dash_dropped=$(report_value "$report" bench-comparison "Results by run" M)
  if [ "$k6_dropped" -gt 0 ] && [ "$dash_dropped" = "$k6_dropped" ]; then
    pass "results table dropped = k6 summary dropped_iterations ($k6_dropped)"
  else
    fail "results table dropped $dash_dropped != k6 summary dropped_iterations $k6_dropped"
  fi
  local timeouts dropped
  timeouts=$(query_value "sum(max_over_time(k6_bench_errors_total{testid=\"$TESTID\",class=\"timeout\"}[10m]))")
  dropped=$(query_value "sum(max_over_time(k6_dropped_iterations_total{testid=\"$TESTID\"}[10m]))")
  if [ -n "$timeouts" ] && [ -n "$dropped" ]; then
    pass "provoked for real: $timeouts timeouts, $dropped dropped iterations"
  else
    fail "timeouts ($timeouts) or dropped iterations ($dropped) missing"
  fi
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
    99) fail "scenarios/static.js held its rate (k6 exit 99: $(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["requests"]; print(r["dropped_iterations"], "dropped iterations,", r.get("dropped_because"))' "$WORK/static/summary.json" 2>&1))" ;;
    *) fail "scenarios/static.js run (k6 exit $rc)"; sed 's/^/      /' "$WORK/static/k6.log"; return ;;
  esac
  sleep 2
  local panels=(
    "bench-run-overview/Request rate*" "bench-run-overview/Dropped iterations" "bench-run-overview/VUs*"
    "bench-run-overview/Latency*" "bench-run-overview/p99 latency by path" "bench-run-overview/Responses by HTTP status"
    "bench-run-overview/Errors*" "bench-run-overview/Error ratio" "bench-run-overview/Data sent and received"
    "bench-comparison/Results by run" "bench-comparison/Tail latency by run" "bench-comparison/Latency by percentile"
    "bench-comparison/Achieved request rate by run" "bench-comparison/Errors*" "bench-comparison/p99 by run")
  local IFS=,
  expect "checker: load, latency and error panels have data from scenarios/static.js" \
    python3 "$CHECK" --quiet --prometheus "$PROM" --testid "$testid" --start "$((start - 30))" \
      --require-data "${panels[*]}" --report "$WORK/static/report.json"
  unset IFS
  # A clean run still has a series per error class (started at 0 in setup): panels read 0, not "no data".
  local classes error_sum
  classes=$(query_value "count(count by (class) (k6_bench_errors_total{testid=\"$testid\"}))")
  error_sum=$(query_value "sum(k6_bench_errors_total{testid=\"$testid\"})")
  if [ "$classes" = 6 ] && [ "$error_sum" = 0 ]; then
    pass "static scenario: all 6 error classes have a series, at 0 (a clean run)"
  else
    fail "static scenario: error classes with a series: ${classes:-none} (want 6), their sum: ${error_sum:-none} (want 0)"
  fi
  local k6_reqs dash_reqs
  k6_reqs=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["requests"]["total"])' "$WORK/static/summary.json")
  dash_reqs=$(report_value "$WORK/static/report.json" bench-comparison "Results by run" F)
  if [ "$k6_reqs" -gt 0 ] && [ "$dash_reqs" = "$k6_reqs" ]; then
    pass "static scenario: results table requests = summary.json requests.total ($k6_reqs)"
  else
    fail "static scenario: results table requests $dash_reqs != summary.json requests.total $k6_reqs"
  fi
}

# The README picture is rendered from the dashboards' own queries: every run-overview panel draws.
check_render() {
  local svg="$WORK/run-overview.svg"
  expect "render.py draws run-overview from its queries" \
    python3 "$BENCH_ROOT/dashboards/generator/render.py" "$BENCH_ROOT/dashboards/run-overview.json" \
      --prometheus "$PROM" --testid "$TESTID" --start "$((RUN_START - 10))" --end now --out "$svg"
  local lines empty
  lines=$(python3 -c 'import sys; print(open(sys.argv[1]).read().count("<polyline"))' "$svg")
  empty=$(python3 -c 'import sys; print(open(sys.argv[1]).read().count(">No data<"))' "$svg")
  if [ "$lines" -ge 15 ] && [ "$empty" -eq 0 ]; then
    pass "rendered run overview: $lines lines, no empty panel"
  else
    fail "rendered run overview: $lines lines, $empty empty panels"
  fi
}

# Traefik panels against a real Traefik (no cluster): only when the e2e part's cached Traefik build
# exists (8 min to build: not this fast tier's to pay). Otherwise SKIPPED, counted in the closing
# line (every cold `make test`: the e2e part builds Traefik later and checks @traefik itself).
check_traefik_panels() {
  if [ ! -x "$BENCH_CACHE/bin/traefik" ]; then
    skip "Traefik v3.6.12 panels: no $BENCH_CACHE/bin/traefik yet (ci/e2e/build-binaries.sh builds it; the e2e part checks @traefik)"
    return 0
  fi
  expect "Traefik v3.6.12 panels have data with real Traefik churn (ci/test/dashboards/verify-traefik.sh)" \
    bash "$BENCH_ROOT/ci/test/dashboards/verify-traefik.sh"
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
  run_k6_data
  check_series_names
  check_queries_against_prometheus
  check_real_static_scenario
  check_render
  check_traefik_panels
  check_failure_paths
  log "dashboards test took $((SECONDS - t0)) s"
  echo "dashboards: $PASSED passed, $FAILED failed, $SKIPPED skipped"
  [ "$FAILED" -eq 0 ]
}

main "$@"

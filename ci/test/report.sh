#!/usr/bin/env bash
# Tests the report generator (dashboards/report/) on summaries of real short k6 runs (scenarios/static.js
# against the chart's backend nginx on 127.0.0.1, remote-writing into a real Prometheus 2.42) and on
# crafted edge cases (zero requests, only errors, dropped iterations, incomparable runs, by_path).
# Every HTML report is rendered in headless Debian chromium (no console message allowed, a
# screenshot taken) and every Markdown table is compared with the JSON numbers.
# The churn time series (scale events, replicas) come from ci/test/dashboards/testdata/emit.js, a real k6
# run with SIMULATED churn telemetry (this fast tier has no cluster); its summary is a crafted file.
# Usage: ci/test/report.sh       (closing line: "report: N passed, N failed")
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/dashboards/report/venv.sh"
# Real nginx, Prometheus and k6 remote-write helpers shared with the dashboards test.
. "$BENCH_ROOT/ci/test/dashboards/lib.sh"

WORK=$(mktemp -d /tmp/bench-report-test.XXXXXX)
# nginx workers run as nobody: they must reach the /bytes/ bodies under $WORK.
chmod 755 "$WORK"
passed=0 failed=0

cleanup() {
  stop_started_processes
  rm -rf "$WORK"
}
trap cleanup EXIT

pass() { passed=$((passed + 1)); log "ok: $*"; }
fail() { failed=$((failed + 1)); log "FAIL: $*"; }
# check NAME CMD...: one real check; its output goes to $WORK/check.log on failure.
check() {
  local name=$1; shift
  if "$@" > "$WORK/check.out" 2>&1; then pass "$name"; else fail "$name"; sed 's/^/    /' "$WORK/check.out" >&2; fi
}

report() { PYTHONPATH="$BENCH_ROOT/dashboards/report" "$REPORT_PYTHON" -m benchreport "$@"; }
# check_merge MERGED PROM RUNNER_SUMMARY...: ci/test/report/checks/check_merge.py (it reads
# Prometheus through the report's client).
check_merge() { PYTHONPATH="$BENCH_ROOT/dashboards/report" "$REPORT_PYTHON" "$BENCH_ROOT/ci/test/report/checks/check_merge.py" "$@"; }

# expect_exit CODE CMD...: runs CMD, which must exit with CODE.
expect_exit() {
  local want=$1 rc=0; shift
  "$@" || rc=$?
  [ "$rc" -eq "$want" ] || { echo "exit $rc, expected $want: $*"; return 1; }
}

# json_get FILE PYEXPR: evaluates PYEXPR with `r` = the JSON document, prints the result.
json_get() { "$REPORT_PYTHON" -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# expect_json FILE PYEXPR: PYEXPR over `r` must be true.
expect_json() {
  local got; got=$(json_get "$1" "$2")
  [ "$got" = "True" ] || { echo "$1: not true: $2"; json_get "$1" "r"; return 1; }
}

# rejected WANT1 WANT2 ARGS...: the generator must exit 2 and its message must contain both strings.
rejected() {
  local want1=$1 want2=$2 rc=0; shift 2
  report --out "$WORK/out/bad" "$@" > /dev/null 2> "$WORK/bad.err" || rc=$?
  [ "$rc" -eq 2 ] && grep -qF -- "$want1" "$WORK/bad.err" && grep -qF -- "$want2" "$WORK/bad.err" \
    || { echo "exit $rc, wanted 2 and messages [$want1] [$want2]; got:"; cat "$WORK/bad.err"; return 1; }
}

# matrix_rejected WANT ARGS...: dashboards/report/matrix.sh must exit non-zero before touching any cluster,
# with WANT in its message.
matrix_rejected() {
  local want=$1 rc=0; shift
  bash "$BENCH_ROOT/dashboards/report/matrix.sh" --values "$WORK/matrix-values.yaml" "$@" > /dev/null 2> "$WORK/matrix.err" || rc=$?
  [ "$rc" -ne 0 ] && grep -qF -- "$want" "$WORK/matrix.err" || { echo "exit $rc, wanted [$want]; got:"; cat "$WORK/matrix.err"; return 1; }
}

markdown_matches_json() { "$REPORT_PYTHON" "$BENCH_ROOT/ci/test/report/checks/check_markdown.py" "$1"; }

chromium_flags() {
  printf '%s\n' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync
}

# renders_cleanly HTML PNG: headless chromium renders HTML with a new empty profile, logs every
# console message (page scripts, failed loads, CSP violations) and saves a screenshot; fails on any
# console message, a missing or tiny screenshot, or a DOM with fewer <svg> than the report's charts.
renders_cleanly() {
  local html=$1 png=$2 profile log dom want got
  profile=$(mktemp -d "$WORK/chromium.XXXXXX")
  log="$png.log"
  mapfile -t flags < <(chromium_flags)
  timeout 90 chromium "${flags[@]}" --user-data-dir="$profile" --enable-logging=stderr --v=0 \
    --window-size=1200,3000 --screenshot="$png" "file://$html" > /dev/null 2> "$log"
  if grep -E ':CONSOLE(:|\()' "$log"; then echo "console messages while rendering $html"; return 1; fi
  [ -s "$png" ] && [ "$(stat -c %s "$png")" -gt 20000 ] || { echo "screenshot $png missing or tiny"; return 1; }
  dom=$(timeout 90 chromium "${flags[@]}" --user-data-dir="$profile" --dump-dom "file://$html" 2>/dev/null)
  want=$(find "$(dirname "$html")/charts" -name '*.svg' | wc -l)
  got=$(grep -o '<svg' <<<"$dom" | wc -l)
  [ "$got" -ge "$want" ] && [ "$want" -gt 0 ] || { echo "DOM has $got <svg> for $want charts"; return 1; }
  grep -q '<h2>Verdict</h2>' <<<"$dom" || { echo "rendered DOM lacks the Verdict section"; return 1; }
}

# A report folder passes the common checks: files written, Markdown = JSON, renders cleanly.
check_report_dir() {
  local name=$1 dir=$2
  check "$name: Markdown tables match the summary JSON" markdown_matches_json "$dir"
  check "$name: HTML renders in chromium without console messages; screenshot taken" \
    renders_cleanly "$dir/report.html" "$WORK/screenshots/$name.png"
}

install_dependencies() {
  apt_install chromium nginx prometheus curl
  ensure_report_venv
  bash "$BENCH_ROOT/scenarios/runner/build.sh" > /dev/null
}

# run_static TESTID RATE PATH: a real scenarios/static.js run into $WORK/runs/TESTID/summary.json.
run_static() {
  local testid=$1 rate=$2 path=$3 dir="$WORK/runs/$1" rc=0
  mkdir -p "$dir"
  BENCH_TARGET_URL="http://127.0.0.1:$NGINX_PORT" BENCH_PATH="$path" BENCH_RATE="$rate" \
  BENCH_DURATION=8s BENCH_CONNECTIONS=100 BENCH_TESTID="$testid" BENCH_SUMMARY_DIR="$dir" \
    run_k6_remote_write "$PROM_PORT" "$testid" "$BENCH_ROOT/scenarios/static.js" > "$dir/k6.log" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 99 ] || die "k6 run $testid failed (exit $rc): $(tail -n 20 "$dir/k6.log")"
  [ -s "$dir/summary.json" ] || die "k6 run $testid wrote no summary.json"
  k6_held_rate "k6 run $testid" "$rc" "$dir/summary.json"
}

# k6_held_rate NAME RC SUMMARY: these rates hold on local nginx, so k6 must exit 0. 99 (the static
# scenario's threshold: iterations dropped) is a failed check, not a pass; the run's summary is
# still written and the checks after it read it.
k6_held_rate() {
  if [ "$2" -eq 0 ]; then
    pass "$1: exit 0, the rate held"
  else
    fail "$1: exit $2, $(json_get "$3" "'%s dropped iterations (%s)' % (r['requests']['dropped_iterations'], r['requests'].get('dropped_because'))")"
  fi
}

# run_simulated_churn TESTID: ci/test/dashboards/testdata/emit.js (real requests, simulated scale steps)
# with a crafted summary for the same testid; k6's own count of scale events in scale_events.count.
run_simulated_churn() {
  local testid=$1 dir="$WORK/runs/$1"
  mkdir -p "$dir"
  BENCH_TARGET_URL="http://127.0.0.1:$NGINX_PORT" BENCH_CLOSED_URL="http://127.0.0.1:$CLOSED_PORT" \
  BENCH_RATE=50 BENCH_DURATION=13s \
    run_k6_remote_write "$PROM_PORT" "$testid" "$BENCH_ROOT/ci/test/dashboards/testdata/emit.js" \
      --summary-export "$dir/k6-export.json" > "$dir/k6.log" 2>&1 \
    || die "k6 churn run failed: $(tail -n 20 "$dir/k6.log")"
  sed "s/TESTID/$testid/" "$BENCH_ROOT/ci/test/report/testdata/churn-template.json" > "$dir/summary.json"
  json_get "$dir/k6-export.json" "int(r['metrics']['bench_scale_events']['count'])" > "$dir/scale_events.count"
}

# run_runners TESTID SCRIPT TARGET_URL...: one run of SCRIPT split over one real k6 process per
# TARGET_URL the way k6-operator splits it (execution segments (i-1)/N:i/N of one sequence,
# --tag instance_id=i, one testid), all remote-writing into the same Prometheus, with the caller's
# BENCH_* environment; runner i loads TARGET_URL i. Each writes $WORK/runs/TESTID/runner-i/summary.json
# and must exit 0 (these rates hold on local nginx; 99 is a failed check, anything else stops the part).
run_runners() {
  local testid=$1 script=$2 n i rc dir sequence=0; shift 2
  local -a targets=("$@") pids=()
  n=${#targets[@]}
  for i in $(seq "$n"); do sequence+=",$i/$n"; done
  for i in $(seq "$n"); do
    dir="$WORK/runs/$testid/runner-$i"
    mkdir -p "$dir"
    BENCH_TARGET_URL="${targets[i-1]}" BENCH_TESTID="$testid" BENCH_SUMMARY_DIR="$dir" \
      run_k6_remote_write "$PROM_PORT" "$testid" "$script" --tag "instance_id=$i" \
        --execution-segment "$((i - 1))/$n:$i/$n" --execution-segment-sequence "$sequence" > "$dir/k6.log" 2>&1 &
    pids+=($!)
  done
  for i in $(seq "$n"); do
    rc=0; wait "${pids[i-1]}" || rc=$?
    dir="$WORK/runs/$testid/runner-$i"
    [ "$rc" -eq 0 ] || [ "$rc" -eq 99 ] || die "runner $i of $testid failed (exit $rc): $(tail -n 20 "$dir/k6.log")"
    [ -s "$dir/summary.json" ] || die "runner $i of $testid wrote no summary.json"
    k6_held_rate "runner $i of $testid ($(basename "$script"))" "$rc" "$dir/summary.json"
  done
}

# start_error_server MODE PORT: scenarios/tests/error_server.py (refuse, reset, ...) on 127.0.0.1:PORT.
start_error_server() {
  python3 "$BENCH_ROOT/scenarios/tests/error_server.py" "$1" "$2" > "$WORK/error-server-$1.log" 2>&1 &
  DASH_PIDS+=($!)
  local deadline=$((SECONDS + 15))
  # A bare connect is no setup check: the server just closes it.
  until python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$2" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "error server $1 on port $2 did not listen within 15 s"
    sleep 0.2
  done
}

# results_rejected WANT1 WANT2 ARGS...: `results` must exit 2 with both strings in its message.
results_rejected() {
  local want1=$1 want2=$2 rc=0; shift 2
  report results "$@" > /dev/null 2> "$WORK/results.err" || rc=$?
  [ "$rc" -eq 2 ] && grep -qF -- "$want1" "$WORK/results.err" && grep -qF -- "$want2" "$WORK/results.err" \
    || { echo "exit $rc, wanted 2 and messages [$want1] [$want2]; got:"; cat "$WORK/results.err"; return 1; }
}

# merged_churn_matches MERGED K6_EXPORT: the merged scale events equal k6's own count, so do the
# convergence events (added + removed: emit.js records one per scale step), and the merged
# convergence max lies within one schema-3 bucket of k6's exact max.
merged_churn_matches() {
  "$REPORT_PYTHON" - "$1" "$2" <<'PY'
import json, sys
m, e = (json.load(open(p)) for p in sys.argv[1:3])
conv, k6conv = m["convergence_ms"], e["metrics"]["bench_endpoint_convergence"]
merged_max = max(conv[x]["max"] or 0 for x in ("added", "removed"))
checks = {
    "scale events": (m["scale_events"], int(e["metrics"]["bench_scale_events"]["count"])),
    "convergence events": (conv["added"]["count"] + conv["removed"]["count"], int(e["metrics"]["bench_scale_events"]["count"])),
}
bad = [f"{k}: merged {a} vs k6 {b}" for k, (a, b) in checks.items() if a != b or b == 0]
if not (k6conv["max"] / 2 ** (1 / 8) <= merged_max <= k6conv["max"] * 2 ** (1 / 8)):
    bad.append(f"convergence max: merged {merged_max} vs k6 {k6conv['max']}")
print("\n".join(bad) or f"ok: {checks}, max {merged_max} vs {k6conv['max']}")
sys.exit(1 if bad else 0)
PY
}

# merge_checker_catches TAMPERED PROM RUNNER_SUMMARY...: check_merge.py must exit 1 and name the
# request count, the read errors and runner 1's lag count.
merge_checker_catches() {
  local rc=0
  check_merge "$@" > "$WORK/tampered.out" 2>&1 || rc=$?
  [ "$rc" -eq 1 ] && grep -q "^FAIL: merged requests = sum of the runners" "$WORK/tampered.out" &&
    grep -q "^FAIL: errors.read = sum over runners" "$WORK/tampered.out" &&
    grep -q "^FAIL: runner 1: lag samples = its own" "$WORK/tampered.out" ||
    { echo "exit $rc; wanted 1 and three FAIL lines:"; cat "$WORK/tampered.out"; return 1; }
}

# parts_checker_catches TAMPERED WANTED RUNNER_SUMMARY...: check_parts.py must exit 1 with a FAIL
# line for each of WANTED (regular expressions separated by ';').
parts_checker_catches() {
  local rc=0 tampered=$1 want; shift
  local -a wanted
  IFS=';' read -ra wanted <<<"$1"; shift
  "$REPORT_PYTHON" "$BENCH_ROOT/ci/test/report/checks/check_parts.py" "$tampered" "$@" > "$WORK/tampered-parts.out" 2>&1 || rc=$?
  [ "$rc" -eq 1 ] || { echo "exit $rc, wanted 1; output:"; cat "$WORK/tampered-parts.out"; return 1; }
  for want in "${wanted[@]}"; do
    grep -q "^FAIL: $want" "$WORK/tampered-parts.out" || { echo "no 'FAIL: $want' line:"; cat "$WORK/tampered-parts.out"; return 1; }
  done
}

# results_lists URL TESTID: `results --list` prints TESTID among the run ids of the Prometheus at URL.
results_lists() {
  report results --list --prometheus "$1" > "$WORK/list.out" || return 1
  grep -qx "$2" "$WORK/list.out" || { echo "run $2 not listed:"; cat "$WORK/list.out"; return 1; }
}

# wait_series_stable TESTID: every runner's last remote write of the run is in Prometheus (its
# request count reads the same twice, 1 s apart; at most 30 s).
wait_series_stable() { prom_cli "$prom" settled "$1" > /dev/null; }

# contract_check CHECK ARGS...: ci/test/contract.py CHECK ARGS: exit 1, printing each difference,
# when a copy of a fact differs from scenarios/contract.json.
contract_check() { "$REPORT_PYTHON" "$BENCH_ROOT/ci/test/contract.py" "$@"; }

# test_contract OUT TESTDATA REAL_SUMMARY: every copy of the contract's facts equals it (the k6
# modules as a real k6 loads them, the READMEs, the dashboards' metric fixture); every summary this
# part wrote or read validates against its bench.summary/v1 schema, and crafted bad ones do not.
test_contract() {
  local out=$1 td=$2 real=$3 dump="$WORK/contract-dump.json" f m
  k6 run --quiet --no-color "$BENCH_ROOT/scenarios/tests/contract-dump.js" > "$dump" 2> "$WORK/contract-dump.log" \
    || { log "scenarios/tests/contract-dump.js failed:"; cat "$WORK/contract-dump.log" >&2; : > "$dump"; }
  check "contract: consistent with itself (schema, classes, causes, percentiles, Prometheus names)" contract_check self
  check "contract: scenarios/lib/errors.js ERROR_CLASSES and ERROR_CAUSES equal it" contract_check k6-errors "$dump"
  check "contract: scenarios/lib/summary-writer.js percentiles (keys, k6 stats) equal it" contract_check k6-percentiles "$dump"
  check "contract: the metrics of scenarios/lib/metrics.js and route-metrics.js (names, k6 types) equal it" \
    contract_check k6-metrics "$dump"
  check "contract: scenarios/lib/config.js DEFAULTS (every BENCH_* and its default) equal it" contract_check k6-variables "$dump"
  check "contract: config.js accepts and refuses each BENCH_* type's examples and a count's max and max + 1 (real k6)" \
    contract_check k6-variable-types "$dump"
  check "contract: the chart's TestRun sets its BENCH_* and values.yaml has their keys with their defaults" \
    contract_check chart-variables
  command -v helm > /dev/null || bash "$BENCH_ROOT/ci/tools/install.sh" >&2
  check "contract: helm template accepts and refuses the same examples through the variables' values keys" \
    contract_check chart-variable-types "$(command -v helm)" "$(offline_chart_copy "$WORK/chart")"
  check "contract: README.md Scenario configuration table (variables, defaults)" contract_check readme-variables
  check "contract: every k6 series of ci/test/dashboards/fixtures/metrics.json is a contract metric of that type" \
    contract_check dashboards-fixture
  check "contract: README.md Metrics table (names, types, Prometheus series)" contract_check readme-metrics README.md
  check "contract: scenarios/README.md Metrics table (names, types)" contract_check readme-metrics scenarios/README.md
  check "contract: README.md and scenarios/README.md error classes and causes" contract_check readme-errors
  check "contract: README.md's summary example is a valid bench.summary/v1" contract_check readme-summary
  while read -r f; do
    [ "$f" != "$td/testrun-template.json" ] || continue
    check "contract: ${f#"$WORK/"} is a valid bench.summary/v1" contract_check valid "$f"
  done < <(find "$WORK/runs" "$out" "$td" -name '*.json' \( -name summary.json -o -path "$td/*" \) | sort)
  while read -r m; do
    check "contract: the schema rejects a real summary with $m" contract_check rejects "$real" "$m"
  done < <(contract_check mutations)
}

main() {
  local t0=$SECONDS td="$BENCH_ROOT/ci/test/report/testdata" out="$WORK/out" prom
  install_dependencies
  log "dependencies ready in $((SECONDS - t0)) s"
  mkdir -p "$WORK/screenshots" "$out"

  NGINX_PORT=$(free_port) PROM_PORT=$(free_port) CLOSED_PORT=$(free_port)
  start_backend_nginx "$WORK/nginx" "$NGINX_PORT"
  start_prometheus "$WORK/prometheus" "$PROM_PORT"
  prom="http://127.0.0.1:$PROM_PORT"
  run_static report-a 100 /
  run_static report-c 100 /
  run_static report-b 50 /bytes/4k
  run_simulated_churn report-churn
  log "real runs done at $((SECONDS - t0)) s"
  local a="$WORK/runs/report-a/summary.json" b="$WORK/runs/report-b/summary.json"
  local c="$WORK/runs/report-c/summary.json" churn="$WORK/runs/report-churn/summary.json"

  # -- one run over three runners, merged from Prometheus (make results)
  REFUSE_PORT=$(free_port) RESET_PORT=$(free_port)
  start_error_server refuse "$REFUSE_PORT"
  start_error_server reset "$RESET_PORT"
  # runner 1 loads nginx; runner 2 a server that refuses connections after the setup check
  # (connection errors), runner 3 one that resets them (read errors): the merge must add up classes.
  BENCH_RATE=150 BENCH_DURATION=10s BENCH_CONNECTIONS=60 run_runners report-merge "$BENCH_ROOT/scenarios/static.js" \
    "http://127.0.0.1:$NGINX_PORT" "http://127.0.0.1:$REFUSE_PORT" "http://127.0.0.1:$RESET_PORT"
  log "three-runner run done at $((SECONDS - t0)) s"
  local merged="$out/merged" runner_summaries=("$WORK"/runs/report-merge/runner-*/summary.json)
  check "three runners: Prometheus holds every runner's last samples" wait_series_stable report-merge
  check "results: merged summary and report written" report results --testid report-merge --prometheus "$prom" \
    --out "$merged" --rate 150 --duration 10s --runner-summary "${runner_summaries[0]}" --budget p50=1s
  check "results: merged counts, classes, percentiles and lag match the runners and Prometheus" \
    check_merge "$merged/summary.json" "$prom" "${runner_summaries[@]}"
  check "results: the report shows what each class was made of (refused connects, resets after the write)" \
    grep -Eq '\| *connection/refused *\|(.*\|)? *read/reset *\|' "$merged/report.md"
  [ ! -s "$merged/summary.json" ] || log "merged: $(json_get "$merged/summary.json" "'requests %(total)s, %(rate_achieved)s req/s, dropped %(dropped_iterations)s' % r['requests'] + ', errors %s' % {k: v for k, v in r['errors'].items() if v} + ', p99 %s ms' % r['latency_ms']['p99'] + ', bucket ratio %s' % r['merge']['histogram_bucket_ratio'] + ', runners ' + '; '.join('%s: %s req, p99 %s ms, lag n=%s %s' % (x['instance_id'], x['requests'], x['latency_ms']['p99'], x['lag_ms']['count'], 'CPU-BOUND' if x['cpu_bound'] else 'ok') for x in r['runners'])")"
  "$REPORT_PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1])); r["requests"]["total"] += 50; r["errors"]["read"] += 1; r["runners"][0]["lag_ms"]["count"] += 1
json.dump(r, open(sys.argv[2], "w"))' "$merged/summary.json" "$WORK/tampered-merge.json"
  check "merge checker catches a changed count, error class and lag count" merge_checker_catches \
    "$WORK/tampered-merge.json" "$prom" "${runner_summaries[@]}"
  check "results: settings from the runner summary, rate from --rate" expect_json "$merged/summary.json" \
    "r['settings']['rate']==150 and r['settings']['connections']==60 and r['scenario']=='static' and r['controller']=='none'"
  # The TestRun as `kubectl get testrun -o json` gives it (crafted in the chart's shape; the e2e
  # matrix check reads a real one): the settings the chart rendered into the runner env.
  sed "s/TESTID/report-merge/g" "$td/testrun-template.json" > "$WORK/testrun.json"
  check "results --testrun: written" report results --testid report-merge --prometheus "$prom" \
    --out "$out/merged-testrun" --testrun "$WORK/testrun.json"
  check "results --testrun: rate, duration, URL, TLS, scenario, controller and environment from the TestRun" \
    expect_json "$out/merged-testrun/summary.json" "r['requests']['rate_target']==150 and r['settings']['duration_s']==10 \
    and r['settings']['target_url']=='https://bench-traefik.bench.svc' and r['settings']['tls'] is True \
    and r['settings']['churn_pattern'] is None and r['settings']['path'] is None and r['scenario']=='static' and r['controller']=='traefik' \
    and r['settings']['environment']['runner_parallelism']==3 and r['requests']['total']==$(json_get "$merged/summary.json" "r['requests']['total']")"
  sed "s/TESTID/another-run/g" "$td/testrun-template.json" > "$WORK/testrun-other.json"
  check "results --testrun: another run's TestRun is refused" results_rejected "run id 'another-run', not 'report-merge'" \
    "--testrun $WORK/testrun-other.json" --testid report-merge --testrun "$WORK/testrun-other.json" --prometheus "$prom" --out "$WORK/out/nope"
  check "results: the merged summary is read back by the report" report --out "$out/merged-again" "$merged/summary.json"
  check "results: one report row per runner with its lag, runtime and CPU-throttle verdicts" \
    grep -Eq '^\| 3 \| [0-9]+ \| 50 \| [0-9.]+ \|.*\| (ok|CPU-BOUND) \| [0-9.]+ \| [0-9.]+ \| (ok|RUNTIME-BOUND) \| [0-9.]+ \| (ok|THROTTLED) \|$' "$merged/report.md"
  check_report_dir merged "$merged"
  # -- parts and steps over two runners: by_path (paths), the knee (max-rps) and the ceiling (calibrate), merged
  BENCH_URL_CLUSTERIP="http://127.0.0.1:$NGINX_PORT" BENCH_URL_POD="http://127.0.0.1:$NGINX_PORT" \
  BENCH_PATH=/bytes/4k BENCH_RATE=100 BENCH_DURATION=3s BENCH_CONNECTIONS=20 \
    run_runners report-paths "$BENCH_ROOT/scenarios/paths.js" "http://127.0.0.1:$NGINX_PORT" "http://127.0.0.1:$NGINX_PORT"
  BENCH_RATE=400 BENCH_DURATION=10s BENCH_CONNECTIONS=40 \
    run_runners report-knee "$BENCH_ROOT/scenarios/max-rps.js" "http://127.0.0.1:$NGINX_PORT" "http://127.0.0.1:$NGINX_PORT"
  BENCH_RATE=400 BENCH_DURATION=10s BENCH_CONNECTIONS=40 \
    run_runners report-ceiling "$BENCH_ROOT/scenarios/calibrate.js" "http://127.0.0.1:$NGINX_PORT" "http://127.0.0.1:$NGINX_PORT"
  local kind
  for kind in paths knee ceiling; do
    check "two runners ($kind): Prometheus holds every runner's last samples" wait_series_stable "report-$kind"
    check "two runners ($kind): merged by results" report results --testid "report-$kind" --prometheus "$prom" \
      --out "$out/merged-$kind" --runner-summary "$WORK/runs/report-$kind/runner-1/summary.json"
    check "two runners ($kind): merged parts and steps match the runners' own" \
      "$REPORT_PYTHON" "$BENCH_ROOT/ci/test/report/checks/check_parts.py" "$out/merged-$kind/summary.json" \
      "$WORK"/runs/report-$kind/runner-*/summary.json
  done
  [ ! -s "$out/merged-knee/summary.json" ] || log "merged max-rps: $(json_get "$out/merged-knee/summary.json" \
    "'knee %s; steps ' % r['max_rps']['knee_rate'] + ', '.join('%g:%s' % (s['rate_target'], 'ok' if s['ok'] else 'FAIL') for s in r['max_rps']['steps'])")"
  "$REPORT_PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1])); r["max_rps"]["knee_rate"] = r["max_rps"]["steps"][0]["rate_target"]; r["max_rps"]["steps"][2]["rate_achieved"] *= 0.9
json.dump(r, open(sys.argv[2], "w"))' "$out/merged-knee/summary.json" "$WORK/tampered-knee.json"
  check "parts checker catches a changed knee and step rate" parts_checker_catches "$WORK/tampered-knee.json" \
    "max_rps: the knee is the highest held step;max_rps step .*: achieved = sum of the runners'" \
    "$WORK"/runs/report-knee/runner-*/summary.json
  [ ! -s "$out/merged-ceiling/summary.json" ] || log "merged calibrate: $(json_get "$out/merged-ceiling/summary.json" \
    "'ceiling %s (%s per runner), limited by %s; steps ' % (r['calibrate']['ceiling_rate'], r['calibrate']['ceiling_rate_per_runner'], r['calibrate']['limited_by']) + ', '.join('%g:%s' % (s['rate_target'], 'ok' if s['ok'] else 'FAIL') for s in r['calibrate']['steps'])")"
  "$REPORT_PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1])); r["calibrate"]["ceiling_rate"] = r["calibrate"]["steps"][0]["rate_target"]
json.dump(r, open(sys.argv[2], "w"))' "$out/merged-ceiling/summary.json" "$WORK/tampered-ceiling.json"
  check "parts checker catches a changed ceiling" parts_checker_catches "$WORK/tampered-ceiling.json" \
    "calibrate: the ceiling is the highest held step" "$WORK"/runs/report-ceiling/runner-*/summary.json
  check "results --list names the run" results_lists "$prom" report-merge
  check "results: an unknown run id exits 2 and names the ids Prometheus has" results_rejected \
    'no k6_http_reqs_total series with testid=nope' 'report-merge' --testid nope --prometheus "$prom" --out "$WORK/out/nope"
  check "results: a malformed run id is refused" results_rejected "--testid 'a b' is not a run id" 'at most 63' \
    --testid 'a b' --prometheus "$prom" --out "$WORK/out/nope"
  check "results: a bad --duration is refused" results_rejected "--duration 'soon' is not a duration" 'expected e.g. 180s' \
    --testid report-merge --duration soon --prometheus "$prom" --out "$WORK/out/nope"

  local run
  for run in "$a" "$b" "$c"; do
    check "real run $(basename "$(dirname "$run")"): requests answered without error" expect_json "$run" \
      "r['requests']['total'] > 0 and sum(r['errors'].values()) == 0"
  done

  # -- a real run with its Prometheus time series
  # Budgets a loaded 2-core machine holds (the default p99.99=100ms is not guaranteed here).
  check "real run: report written (exit 0)" report --out "$out/real" --prometheus "$prom" --budget errors=0 --budget p50=1s "$a"
  check "real run: verdict PASS, time series found" expect_json "$out/real/report.json" \
    "r['runs'][0]['verdict']=='PASS' and r['runs'][0]['timeseries'] and r['budgets']==['errors=0', 'p50=1s']"
  check "real run: time-series chart written" test -s "$out/real/charts/timeseries-1.svg"
  check_report_dir real "$out/real"

  # -- comparable and incomparable real runs
  check "two comparable real runs: report written" report --out "$out/comparable" --prometheus "$prom" "$a" "$c"
  check "two comparable real runs: no settings warning" expect_json "$out/comparable/report.json" \
    "not any('settings.' in w for w in r['warnings']) and len(r['runs'])==2"
  check "two comparable real runs: overlay chart written" test -s "$out/comparable/charts/percentiles-overlay.svg"
  check_report_dir comparable "$out/comparable"
  check "incomparable real runs (rate, payload): report written" report --out "$out/incomparable" "$a" "$b"
  check "incomparable real runs: rate and path warnings" expect_json "$out/incomparable/report.json" \
    "any('settings.rate differs' in w for w in r['warnings']) and any('settings.path differs' in w for w in r['warnings'])"
  check_report_dir incomparable "$out/incomparable"

  # -- scale events from Prometheus (simulated churn telemetry, real k6 and Prometheus)
  check "churn series: report written" report --out "$out/churn" --prometheus "$prom" "$churn"
  check "churn series: every scale event k6 counted is marked" expect_json "$out/churn/report.json" \
    "r['runs'][0]['scale_events_seen']==$(cat "$WORK/runs/report-churn/scale_events.count") and r['runs'][0]['scale_events_seen']>0"
  check "churn series: replicas and error rates drawn" grep -q 'replicas desired' "$out/churn/charts/timeseries-1.svg"
  check "churn series: errors by class drawn" grep -q 'errors/s connection' "$out/churn/charts/timeseries-1.svg"
  check "churn series: replica range 5 to 7 stated" grep -q 'Backend replicas (desired, from k6_bench_replicas_desired): 5 to 7.' "$out/churn/report.md"
  check_report_dir churn "$out/churn"
  check "churn series, merged by results: written" report results --testid report-churn --prometheus "$prom" \
    --out "$out/churn-merged" --rate 50 --duration 13s
  check "churn series, merged: scale events and convergence as k6 counted them, convergence max within a bucket" \
    merged_churn_matches "$out/churn-merged/summary.json" "$WORK/runs/report-churn/k6-export.json"

  # -- crafted edge cases
  check "zero requests: report written" report --out "$out/zero" "$td/zero-requests.json"
  check "zero requests: verdict NO DATA and a warning" expect_json "$out/zero/report.json" \
    "r['runs'][0]['verdict']=='NO DATA' and any('no request completed' in w for w in r['warnings'])"
  check "zero requests: latency cells n/a" grep -q '| broken | 0 | n/a | n/a |' "$out/zero/report.md"
  check "zero requests: --fail-on-verdict exits 1" expect_exit 1 report --out "$out/zero-gate" --fail-on-verdict "$td/zero-requests.json"
  check_report_dir zero "$out/zero"
  check "only errors: report written" report --out "$out/errors" "$td/only-errors.json"
  check "only errors: verdict FAIL naming the error count" expect_json "$out/errors/report.json" \
    "r['runs'][0]['verdict']=='FAIL' and r['runs'][0]['reasons']==['errors = 60000 > 0']"
  check "only errors: errors share 100%" grep -q '| 59000 | 0 | 0 | 1000 | 0 | 0 | 60000 | 100% |' "$out/errors/report.md"
  check_report_dir errors "$out/errors"
  check "incomparable crafted runs: report written" report --out "$out/dropped" "$td/traefik.json" "$td/dropped.json" "$td/only-errors.json"
  check "incomparable crafted runs: dropped, shortfall, duration, path warnings" expect_json "$out/dropped/report.json" \
    "all(any(k in w for w in r['warnings']) for k in ['dropped 9000 iterations', 'achieved 700 req/s', 'settings.duration_s differs', 'settings.path differs'])"
  check_report_dir dropped "$out/dropped"
  # The runner verdict of a real run, set as each witness would flag it (CPU-bound lag, a cgroup CPU
  # limit that throttled it, its own Go runtime), then as a comfortable runner's.
  local verdicts
  for verdicts in flagged:True comfortable:False; do
    "$REPORT_PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1])); flag = sys.argv[3] == "True"; rn = r["runner"]
rn.update(cpu_bound=flag, runtime_bound=flag, cpu_throttled=flag)
rn["cgroup_cpu"].update(cgroup="v2 /sys/fs/cgroup", quota_cores=0.25, periods=45, throttled_periods=40 if flag else 0,
                        throttled_ratio=0.8889 if flag else 0)
json.dump(r, open(sys.argv[2], "w"))' "$a" "$WORK/${verdicts%:*}-runner.json" "${verdicts#*:}"
    check "a ${verdicts%:*} runner: report written" report --out "$out/${verdicts%:*}" "$WORK/${verdicts%:*}-runner.json"
  done
  check "a flagged runner: the report says CPU-bound, CPU-throttled (88.9% of the quota periods) and paused" expect_json "$out/flagged/report.json" \
    "all(any(k in w for w in r['warnings']) for k in ['runner was CPU-bound', 'CPU-throttled by its cgroup\\'s CPU limit in 88.9% of the quota periods', 'runner paused itself'])"
  check "a flagged runner: ... in the Markdown too" grep -q 'CPU-throttled by its cgroup.s CPU limit in 88.9% of the quota periods' "$out/flagged/report.md"
  check "a comfortable runner: no runner warning" expect_json "$out/comfortable/report.json" "not any('k6 runner' in w for w in r['warnings'])"
  check "paths experiment: one row per by_path entry" report --out "$out/paths" "$td/paths.json"
  check "paths experiment: three runs with path labels" expect_json "$out/paths/report.json" \
    "[x['label'] for x in r['runs']]==['traefik', 'traefik / ingress', 'traefik / clusterip']"
  check_report_dir paths "$out/paths"

  # -- the route experiments, from real runs of ci/test/routes.sh (Traefik v3.6.12): the migration A/B
  # in one summary (HTTPRoute then Ingress on one controller) and a route change to a Service without
  # endpoints, which must fail on its change errors
  check "routes: the A/B and a broken route change: report written" report --out "$out/routes" \
    --budget errors=0 --budget p50=1s "$td/routes-ab.json" "$td/routes-change-broken.json"
  check "routes: HTTPRoute and Ingress side by side, one Routes row each" \
    test "$(grep -cE '^\| route-propagation \| propagation \| (httproute|ingress) \|' "$out/routes/report.md")" -eq 2
  check "routes: the A/B passes, the broken change fails on its change errors" expect_json "$out/routes/report.json" \
    "r['runs'][0]['verdict']=='PASS' and [x['verdict'] for x in r['runs'] if x['label']=='route-change'][0]=='FAIL' \
    and any(s.startswith('routes.httproute.change_errors = ') for x in r['runs'] for s in x['reasons'])"
  check_report_dir routes "$out/routes"

  # -- budgets decide the verdict
  check "budget p99=1us: report written" report --out "$out/b1" --budget p99=1us "$a"
  check "budget p99=1us fails a real run" expect_json "$out/b1/report.json" \
    "r['runs'][0]['verdict']=='FAIL' and r['runs'][0]['reasons'][0].startswith('p99 = ')"
  check "budget p99=10s, 5xx share: report written" report --out "$out/b2" --budget p99=10s --budget errors.http_5xx=0.1% "$a"
  check "budget p99=10s, 5xx share pass a real run" expect_json "$out/b2/report.json" \
    "r['runs'][0]['verdict']=='PASS' and r['budgets']==['p99=10s', 'errors.http_5xx=0.1%']"
  check "budget errors=0.01%: report written" report --out "$out/b3" --budget errors=0.01% "$td/paths.json"
  check "budget errors=0.01% passes 1 in 15000, fails 2 in 15000" expect_json "$out/b3/report.json" \
    "[x['verdict'] for x in r['runs']]==['PASS', 'FAIL', 'PASS']"

  # -- time series unavailable
  check "no Prometheus: the report says the time series are unavailable" \
    grep -q 'Time series unavailable: no --prometheus URL' "$out/incomparable/report.md"
  check "Prometheus down: report still written" report --out "$out/promdown" --prometheus "http://127.0.0.1:$CLOSED_PORT" "$a"
  check "Prometheus down: the report names the unreachable URL" \
    grep -q "Time series unavailable: cannot query Prometheus at http://127.0.0.1:$CLOSED_PORT" "$out/promdown/report.md"
  check "Prometheus without the testid: report written" report --out "$out/notest" --prometheus "$prom" "$td/traefik.json"
  check "Prometheus without the testid: the report says so" \
    grep -q 'has no k6_http_reqs_total series with testid=run-1' "$out/notest/report.md"

  # -- bad input: exit 2 and a message naming the value and what is allowed
  printf '{"schema": "bench.summary/v0", "testid": "x"}' > "$WORK/bad-schema.json"
  sed 's/"timeout": 0/"timeout": -3/' "$td/traefik.json" > "$WORK/bad-negative.json"
  sed 's/"other": 0/"gremlins": 1/' "$td/traefik.json" > "$WORK/bad-class.json"
  check "bad input: wrong schema" rejected 'bench.summary/v0' 'expected "bench.summary/v1"' "$WORK/bad-schema.json"
  check "bad input: negative count" rejected 'errors.timeout=-3 is negative' '>= 0' "$WORK/bad-negative.json"
  check "bad input: unknown error class" rejected 'unknown class(es) gremlins' 'allowed: connection, timeout' "$WORK/bad-class.json"
  check "bad input: missing file" rejected "$WORK/missing.json: cannot read" 'No such file' "$WORK/missing.json"
  check "bad input: unknown budget key" rejected "unknown key 'p42'" 'allowed keys: p50' --budget p42=1ms "$a"
  check "bad input: budget not a duration" rejected "'fast' is not a duration" 'expected e.g. 100ms' --budget p99=fast "$a"
  check "bad input: budget not a count" rejected "'lots' is not a whole number" 'percentage like 0.1%' --budget errors=lots "$a"
  check "bad input: budget given twice" rejected 'given more than once for errors' 'give each key once' --budget errors=0 --budget errors=1 "$a"
  check "bad input: Prometheus URL" rejected "--prometheus 'ftp://x'" 'expected an http(s) URL' --prometheus ftp://x "$a"

  # -- matrix runner: argument checks (a cluster run is documented in dashboards/report/README.md)
  printf 'loadtest:\n  rate: 100\n' > "$WORK/matrix-values.yaml"
  check "matrix: one variant is refused" matrix_rejected 'at least two variants' --out "$WORK/m" a:loadtest.rate=1
  check "matrix: bad variant name is refused" matrix_rejected "variant 'A B:x=1' is not NAME:SPEC" --out "$WORK/m" 'A B:x=1' b:loadtest.rate=1
  check "matrix: bad spec item is refused" matrix_rejected "item 'oops' in variant spec 'oops' is neither" --out "$WORK/m" a:oops b:loadtest.rate=1
  check "matrix: missing values file is refused" matrix_rejected "values file 'nope.yaml' (variant spec 'nope.yaml') does not exist" --out "$WORK/m" a:nope.yaml b:loadtest.rate=1
  check "matrix: runId is the runner's" matrix_rejected "sets loadtest.runId" --out "$WORK/m" a:loadtest.runId=x b:loadtest.rate=1
  check "matrix: bad release name is refused" matrix_rejected "--release 'Bad_Name' is not a Helm release name" --out "$WORK/m" --release Bad_Name a:loadtest.rate=1 b:loadtest.rate=2
  check "matrix: missing kubeconfig is refused" matrix_rejected "--kubeconfig '$WORK/none' does not exist" --out "$WORK/m" --kubeconfig "$WORK/none" a:loadtest.rate=1 b:loadtest.rate=2
  check "matrix: missing preset is refused" matrix_rejected "values file '$WORK/none.yaml' (-f) does not exist" --out "$WORK/m" -f "$WORK/none.yaml" a:loadtest.rate=1 b:loadtest.rate=2
  check "matrix: bad cool-down is refused" matrix_rejected "--cooldown 'soon' is not a whole number" --out "$WORK/m" --cooldown soon a:loadtest.rate=1 b:loadtest.rate=2

  # -- the shared facts (scenarios/contract.json): copies, and every summary above against its schema
  test_contract "$out" "$td" "$a"

  # -- the checkers themselves can fail
  cp -r "$out/real" "$out/tampered"
  sed -i -E '/^\| none \| [0-9]+ \| [0-9.]+ \|/ s/\| [0-9]+ \|/| 999999 |/' "$out/tampered/report.md"
  check "Markdown checker catches a changed number" expect_exit 1 markdown_matches_json "$out/tampered"
  mkdir -p "$out/console/charts" && cp "$out/real/charts/"*.svg "$out/console/charts/"
  sed 's|</body>|<script>console.error("planted")</script></body>|' "$out/real/report.html" > "$out/console/report.html"
  check "chromium check catches a console error" expect_exit 1 renders_cleanly "$out/console/report.html" "$WORK/screenshots/planted.png"

  if [ -n "${BENCH_REPORT_KEEP:-}" ]; then
    mkdir -p "$BENCH_REPORT_KEEP" && cp -r "$out" "$WORK/screenshots" "$BENCH_REPORT_KEEP/"
    log "kept reports and screenshots in $BENCH_REPORT_KEEP"
  fi
  log "report tests took $((SECONDS - t0)) s"
  echo "report: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

main "$@"

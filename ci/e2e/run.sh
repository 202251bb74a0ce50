#!/usr/bin/env bash
# The end-to-end harness: a real dynamic benchmark on the local cluster, from nothing.
#   ci/e2e/run.sh [--keep]
# Steps: build and start the cluster (ci/cluster), build and import the images (ci/images), deploy
# what the subcharts would bring (k6-operator CRDs + manager, Prometheus, Traefik; see
# ci/e2e/manifests), install charts/bench from a copy without its dependency list with
# charts/bench/ci/08-local-cluster-values.yaml, follow the TestRun, print the summary tables and where the results are.
# --keep    leave the release installed at the end (the demo and the e2e test part, ci/test/e2e/, do).
# Evidence of the run (runner logs, replica watch, summary.json, run.json) is kept in
# $BENCH_CACHE/e2e/runs/<testid>; run.json holds what the checks of ci/test/e2e/ read beside it.
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/ci/e2e/lib.sh"

usage() { echo "usage: ci/e2e/run.sh [--keep]" >&2; exit 2; }

KEEP=0
while [ $# -gt 0 ]; do
  case $1 in
    --keep) KEEP=1 ;;
    -h|--help) usage ;;
    *) echo "error: unknown option '$1'; allowed: --keep" >&2; usage ;;
  esac
  shift
done

prepare_tools() {
  apt_install jq curl
  bash "$BENCH_ROOT/ci/tools/install.sh" helm >&2
  command -v helm >/dev/null || die "helm not found in $BENCH_TOOLS/bin after ci/tools/install.sh"
  ensure_report_venv   # the report, and the Prometheus client of the checks (prom_cli)
}

start_cluster() {
  bash "$BENCH_ROOT/ci/cluster/build.sh" >&2
  bash "$BENCH_ROOT/ci/cluster/up.sh" >&2
  # shellcheck source=../cluster/env.sh
  . "$BENCH_ROOT/ci/cluster/env.sh"
}

build_images() { bash "$BENCH_ROOT/ci/images/build.sh" >&2; }

# run_benchmark TESTID: installs the chart for this run id and follows its TestRun to the end.
# Sets RUN_DIR (evidence), RUN_TESTRUN, RUN_RUNNER_LOG, RUN_SUMMARY.
run_benchmark() {
  local testid=$1
  RUN_DIR="$E2E_WORK/runs/$testid"
  rm -rf "$RUN_DIR"; mkdir -p "$RUN_DIR"
  # Remove a TestRun of an earlier run: its hook is replaced on upgrade, but a demo re-run after an
  # interrupted one must not follow the old object.
  kubectl -n "$E2E_NAMESPACE" delete testruns.k6.io --all --wait=true >/dev/null
  RUN_START=$(date +%s)
  # Traefik's TLS request counter before the run (it counts every run since Traefik started).
  TRAEFIK_TLS_BEFORE=$(traefik_metric_sum traefik_entrypoint_requests_tls_total entrypoint=websecure)
  timed install-chart install_chart "$testid"
  watch_backend_replicas "$RUN_DIR/replicas.watch"
  RUN_TESTRUN=$(testrun_name)
  log "following TestRun $E2E_NAMESPACE/$RUN_TESTRUN (testid $testid)"
  timed testrun follow_testrun "$RUN_TESTRUN" "$RUN_DIR" "${BENCH_E2E_TIMEOUT:-600}" ||
    { kill "$WATCH_PID"; die "TestRun $RUN_TESTRUN did not finish; evidence in $RUN_DIR"; }
  kill "$WATCH_PID"
  # k6 pushes its last samples when the runner ends; Prometheus queries are evaluated once they landed.
  PROM_TIME=$(prom_settled "$testid") || die "no Prometheus data for run $testid; evidence in $RUN_DIR"
  RUN_RUNNER_LOG=$(find "$RUN_DIR" -name '*.log' -print -quit)
  [ -n "$RUN_RUNNER_LOG" ] || die "no runner log captured for TestRun $RUN_TESTRUN (stages: $(paste -sd' ' "$RUN_DIR/stage"))"
  RUN_SUMMARY="$RUN_DIR/summary.json"
  extract_summary "$RUN_RUNNER_LOG" "$RUN_SUMMARY" ||
    log "no bench.summary/v1 JSON between BENCH_SUMMARY_JSON_BEGIN/END in $RUN_RUNNER_LOG"
  # what the checks need besides the evidence files: when the run started, the instant its
  # Prometheus queries are evaluated at, Traefik's TLS counter before it, the TestRun's name
  jq -n --arg testid "$testid" --arg testrun "$RUN_TESTRUN" --arg prometheus "$PROM_URL" \
    --argjson start "$RUN_START" --argjson prom_time "$PROM_TIME" \
    --argjson traefik_tls_before "$TRAEFIK_TLS_BEFORE" \
    '{testid: $testid, testrun: $testrun, prometheus: $prometheus, start: $start,
      prom_time: $prom_time, traefik_tls_before: $traefik_tls_before}' > "$RUN_DIR/run.json"
}

print_results() {
  echo
  echo "=== bench summary (testid $TESTID, TestRun $RUN_TESTRUN, stages: $(paste -sd' ' "$RUN_DIR/stage"))"
  print_summary_tables "$RUN_RUNNER_LOG"
  echo
  echo "Results:    $RUN_SUMMARY"
  echo "Runner log: $RUN_RUNNER_LOG"
  echo "Prometheus: $PROM_URL (query e.g. sum(k6_http_reqs_total{testid=\"$TESTID\"}))"
  echo "Dashboards: $BENCH_ROOT/dashboards/*.json (shipped as ConfigMaps by the chart: kubectl -n $E2E_NAMESPACE get configmaps -l grafana_dashboard)"
  echo "Phases:     ${E2E_TIMINGS[*]}"
  local first
  first=$(first_sample_time "$TESTID")
  if [ -n "$first" ]; then
    echo "First request: $(( ${first%.*} - E2E_T0 )) s after start (first k6 sample in Prometheus, 5 s resolution)"
  fi
  if [ -s "$RUN_SUMMARY" ]; then
    echo "Rate held:  $(jq -r '"\(.requests.rate_achieved) of \(.requests.rate_target) req/s, \(.requests.dropped_iterations) dropped iterations, \(.requests.total) requests"' "$RUN_SUMMARY")"
  fi
}

main() {
  require_root "ci/e2e/run.sh"
  mkdir -p "$E2E_WORK"
  [ -f "$E2E_VALUES" ] || die "values file $E2E_VALUES not found (BENCH_E2E_VALUES)"
  TESTID=${BENCH_E2E_TESTID:-e2e-$(date +%Y%m%d-%H%M%S)}
  timed tools prepare_tools
  timed cluster start_cluster
  timed images build_images
  timed stack deploy_stack
  run_benchmark "$TESTID"
  print_results
  if [ "$KEEP" = 0 ]; then
    helm uninstall "$E2E_RELEASE" -n "$E2E_NAMESPACE" --wait >&2
  fi
  log "total $(( $(date +%s) - E2E_T0 )) s: ${E2E_TIMINGS[*]}"
}

main "$@"

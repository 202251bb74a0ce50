#!/usr/bin/env bash
# Re-draws the README pictures (dashboards/images/*.svg) from the dashboards' own queries against a
# real Prometheus 2.42 fed by real k6 runs on 127.0.0.1: scenarios/static.js for 10 s, then
# ci/test/dashboards/testdata/emit.js for 90 s (errors, timeouts, dropped iterations; simulated churn
# telemetry), and the controller view from ci/test/dashboards/verify-traefik.sh (needs the cached
# Traefik build). About 3 min.
# Usage: ci/tools/render-pictures.sh [OUT_DIR]   (default dashboards/images)
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/ci/test/dashboards/lib.sh"

OUT=${1:-$BENCH_ROOT/dashboards/images}
WORK=$(mktemp -d /tmp/bench-render.XXXXXX)
cleanup() {
  stop_started_processes
  rm -rf "$WORK"
}
trap cleanup EXIT

render() {
  python3 "$BENCH_ROOT/dashboards/generator/render.py" "$BENCH_ROOT/dashboards/$1.json" --prometheus "$PROM" \
    --testid "$2" --start "$3" --end "$4" --rate-interval 15s --out "$OUT/$1.svg"
}

main() {
  apt_install prometheus nginx-light curl
  bash "$BENCH_ROOT/scenarios/runner/build.sh" > /dev/null
  mkdir -p "$OUT"
  local prom_port nginx_port stall_port t0 t1
  prom_port=$(free_port); nginx_port=$(free_port); stall_port=$(free_port)
  PROM="http://127.0.0.1:$prom_port"
  start_prometheus "$WORK" "$prom_port"
  start_backend_nginx "$WORK" "$nginx_port"
  start_stall_server "$stall_port"
  t0=$(date +%s)
  local rc=0
  BENCH_TARGET_URL="http://127.0.0.1:$nginx_port" BENCH_RATE=100 BENCH_DURATION=10s BENCH_CONNECTIONS=50 \
    BENCH_TESTID=static-demo BENCH_SUMMARY_DIR="$WORK" \
    run_k6_remote_write "$prom_port" static-demo "$BENCH_ROOT/scenarios/static.js" > "$WORK/static.log" 2>&1 || rc=$?
  # 99 = iterations dropped: a picture of a run that missed its rate is not the static baseline.
  [ "$rc" -eq 0 ] || { cat "$WORK/static.log"; die "static.js exited $rc, want 0"; }
  BENCH_TARGET_URL="http://127.0.0.1:$nginx_port" BENCH_CLOSED_URL="http://127.0.0.1:$(free_port)" \
  BENCH_STALL_URL="http://127.0.0.1:$stall_port" BENCH_RATE=150 BENCH_DURATION=90s \
    run_k6_remote_write "$prom_port" emit-demo "$BENCH_ROOT/ci/test/dashboards/testdata/emit.js" \
      --summary-export "$WORK/emit-summary.json" > "$WORK/emit.log" 2>&1 ||
    { cat "$WORK/emit.log"; die "emit.js failed"; }
  wait_for_prom_value "$PROM" 'sum(k6_http_reqs_total{testid="emit-demo"})' \
    "$(python3 "$BENCH_ROOT/ci/tools/dashboards/assertions.py" count "$WORK/emit-summary.json" http_reqs)" 30 ||
    die "Prometheus does not hold every request of emit-demo"
  t1=$(date +%s)
  render run-overview emit-demo "$((t0 + 15))" "$((t1 + 5))"
  render comparison static-demo,emit-demo "$((t0 - 10))" "$((t1 + 5))"
  bash "$BENCH_ROOT/ci/test/dashboards/verify-traefik.sh" --render-to "$OUT"
}

main "$@"

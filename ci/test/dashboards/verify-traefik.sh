#!/usr/bin/env bash
# Verifies the controller view's Traefik panels against a real Traefik v3.6.12 without a cluster:
# Traefik on 127.0.0.1 (file provider) in front of two backend nginx servers, scraped by a real
# Prometheus 2.42 that also receives k6's remote write; real k6 load goes through Traefik while the
# file provider's server list changes every few seconds (endpoint churn as Traefik sees it: config
# reloads). Then check.py requires data in the @traefik panels and the controller view's run panels,
# and Prometheus must hold at least 5 configuration reloads.
# Builds Traefik itself when it is not cached (ci/e2e/build-binaries.sh: about 8 min cold, shared
# with the scenarios and e2e parts through the build lock; a stamp check when warm).
# Usage: ci/test/dashboards/verify-traefik.sh [--render-to DIR] [--results DIR]
#   prints `verify-traefik: ok` or fails
#   --render-to DIR: also draw the controller view from this run into DIR/controllers.svg
#   --results DIR: leave the checker's report (DIR/report.json) and the reload count (DIR/reloads)
. "$(dirname "$0")/../../lib/common.sh"
. "$BENCH_ROOT/ci/test/dashboards/lib.sh"
# build_traefik and TRAEFIK_VERSION: the one pinned Traefik build of the project.
. "$BENCH_ROOT/ci/e2e/build-binaries.sh"

TRAEFIK="$BENCH_CACHE/bin/traefik"
WORK=$(mktemp -d /tmp/bench-verify-traefik.XXXXXX)

cleanup() {
  stop_started_processes
  rm -rf "$WORK"
}
trap cleanup EXIT

# write_servers FILE N PORT...: Traefik dynamic configuration with the first N backend servers.
write_servers() {
  local file=$1 n=$2; shift 2
  local port i=0
  {
    printf 'http:\n  routers:\n    bench:\n      rule: "PathPrefix(`/`)"\n      service: backend\n'
    printf '      entryPoints: [web]\n  services:\n    backend:\n      loadBalancer:\n        servers:\n'
    for port in "$@"; do
      [ "$i" -lt "$n" ] || break
      printf '          - url: "http://127.0.0.1:%s"\n' "$port"
      i=$((i + 1))
    done
  } > "$file.tmp"
  mv "$file.tmp" "$file"
}

start_traefik() {
  local web=$1 metrics=$2
  cat > "$WORK/traefik.yml" <<YAML
global:
  checkNewVersion: false
  sendAnonymousUsage: false
entryPoints:
  web:
    address: "127.0.0.1:$web"
  metrics:
    address: "127.0.0.1:$metrics"
providers:
  file:
    filename: "$WORK/dynamic.yml"
    watch: true
metrics:
  prometheus:
    entryPoint: metrics
    addEntryPointsLabels: true
    addServicesLabels: true
    # Sub-millisecond to seconds: the defaults (0.1, 0.3, 1.2, 5) cannot resolve a fast backend.
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
log:
  level: WARN
YAML
  "$TRAEFIK" --configFile="$WORK/traefik.yml" > "$WORK/traefik.log" 2>&1 &
  DASH_PIDS+=($!)
  wait_for_http "http://127.0.0.1:$metrics/metrics" 30
}

main() {
  local render_dir="" results="$WORK/results"
  while [ $# -gt 0 ]; do
    case $1 in
      --render-to) render_dir=${2:?--render-to needs a folder}; shift 2 ;;
      --results) results=${2:?--results needs a folder}; shift 2 ;;
      *) die "unknown argument '$1'; usage: verify-traefik.sh [--render-to DIR] [--results DIR]" ;;
    esac
  done
  mkdir -p "$results"
  build_traefik >&2
  [ -x "$TRAEFIK" ] || die "no Traefik binary at $TRAEFIK after build_traefik"
  apt_install prometheus nginx-light curl
  bash "$BENCH_ROOT/scenarios/runner/build.sh" > /dev/null
  local prom_port web_port metrics_port nginx_a nginx_b testid start
  prom_port=$(free_port); web_port=$(free_port); metrics_port=$(free_port)
  nginx_a=$(free_port); nginx_b=$(free_port)
  mkdir -p "$WORK/a" "$WORK/b"
  start_backend_nginx "$WORK/a" "$nginx_a"
  start_backend_nginx "$WORK/b" "$nginx_b"
  write_servers "$WORK/dynamic.yml" 2 "$nginx_a" "$nginx_b"
  start_traefik "$web_port" "$metrics_port"
  start_prometheus "$WORK" "$prom_port" "scrape_configs:
  - job_name: traefik
    scrape_interval: 5s
    static_configs:
      - targets: ['127.0.0.1:$metrics_port']"
  testid="traefik-$(date +%s)"
  start=$(date +%s)
  (
    # The churn's pace (a server-list change every 5 s during the 35 s run), not a synchronization.
    for step in 1 2 3 4 5 6; do
      sleep 5
      write_servers "$WORK/dynamic.yml" $((step % 2 + 1)) "$nginx_a" "$nginx_b"
    done
  ) &
  local churn=$! rc=0 prom="http://127.0.0.1:$prom_port"
  BENCH_TARGET_URL="http://127.0.0.1:$web_port" BENCH_CLOSED_URL="http://127.0.0.1:$(free_port)" \
  BENCH_RATE=50 BENCH_DURATION=35s \
    run_k6_remote_write "$prom_port" "$testid" "$BENCH_ROOT/ci/test/dashboards/testdata/emit.js" > "$WORK/k6.log" 2>&1 || rc=$?
  # emit.js has no threshold that can fail: any exit but 0 is a broken run.
  [ "$rc" -eq 0 ] || { sed 's/^/  /' "$WORK/k6.log"; die "k6 run through Traefik exited $rc, want 0"; }
  wait "$churn"
  # The panels read Traefik's metrics as of its last scrape: wait for one that began after the run.
  local k6_end
  k6_end=$(date +%s)
  local deadline=$((SECONDS + 30))
  until [ "$(prom_query_value "$prom" 'timestamp(up{job="traefik"})' | cut -d. -f1)" -gt "$k6_end" ] 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "Prometheus did not scrape Traefik within 30 s after the run"
    sleep 0.5
  done
  # The file-provider churn must show up as configuration reloads in the reloads panel's metric.
  local reloads
  reloads=$(prom_query_value "$prom" 'max(traefik_config_reloads_total) - min(min_over_time(traefik_config_reloads_total[5m]))')
  echo "${reloads:-0}" > "$results/reloads"
  python3 "$BENCH_ROOT/ci/tools/dashboards/check.py" --quiet --prometheus "$prom" \
    --testid "$testid" --start "$((start - 30))" --require-data "@traefik,bench-controllers/Run:*" \
    --report "$results/report.json" || die "Traefik panels without data (see above)"
  [ "${reloads:-0}" -ge 5 ] || die "expected at least 5 Traefik configuration reloads from 6 server-list changes, saw ${reloads:-0}"
  if [ -n "$render_dir" ]; then
    python3 "$BENCH_ROOT/dashboards/generator/render.py" "$BENCH_ROOT/dashboards/controllers.json" \
      --prometheus "http://127.0.0.1:$prom_port" --testid "$testid" --start "$((start - 5))" --end now \
      --rate-interval 15s --out "$render_dir/controllers.svg"
  fi
  echo "verify-traefik: ok ($testid, Traefik $("$TRAEFIK" version | sed -n 's/^Version: *//p'), $reloads configuration reloads)"
}

main "$@"

#!/usr/bin/env bash
# Verifies the controller view's Traefik panels against a real Traefik v3.6.12 without a cluster:
# Traefik on 127.0.0.1 (file provider) in front of two backend nginx servers, scraped by a real
# Prometheus 2.42 that also receives k6's remote write; real k6 load goes through Traefik while the
# file provider's server list changes every few seconds (endpoint churn as Traefik sees it: config
# reloads). Then check.py requires data in every k6 panel and the @traefik panels.
# Needs the Traefik binary from ci/e2e/build-binaries.sh (8 min build): this script never builds it.
# Usage: ci/test/dashboards/verify-traefik.sh [--render-to DIR]   (prints `verify-traefik: ok` or fails)
#   --render-to DIR: also draw the controller view from this run into DIR/controllers.svg
. "$(dirname "$0")/../../lib/common.sh"
. "$BENCH_ROOT/ci/test/dashboards/lib.sh"

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
  local render_dir=""
  case ${1:-} in
    --render-to) render_dir=${2:?--render-to needs a folder} ;;
    "") ;;
    *) die "unknown argument '$1'; usage: verify-traefik.sh [--render-to DIR]" ;;
  esac
  [ -x "$TRAEFIK" ] || die "no Traefik binary at $TRAEFIK: build it with ci/e2e/build-binaries.sh traefik"
  apt_install prometheus nginx-light curl
  bash "$BENCH_ROOT/ci/k6/build.sh" > /dev/null
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
    for step in 1 2 3 4 5 6; do
      sleep 5
      write_servers "$WORK/dynamic.yml" $((step % 2 + 1)) "$nginx_a" "$nginx_b"
    done
  ) &
  local churn=$!
  BENCH_TARGET_URL="http://127.0.0.1:$web_port" BENCH_CLOSED_URL="http://127.0.0.1:$(free_port)" \
  BENCH_RATE=50 BENCH_DURATION=35s \
    run_k6_remote_write "$prom_port" "$testid" "$BENCH_ROOT/ci/test/dashboards/testdata/emit.js" > "$WORK/k6.log" 2>&1 ||
    { sed 's/^/  /' "$WORK/k6.log"; die "k6 run through Traefik failed"; }
  wait "$churn"
  sleep 6 # one more scrape
  python3 "$BENCH_ROOT/ci/test/dashboards/check.py" --quiet --prometheus "http://127.0.0.1:$prom_port" \
    --testid "$testid" --start "$((start - 30))" --require-data @k6,@traefik --report "$WORK/report.json" ||
    die "Traefik or k6 panels without data (see above)"
  # The file-provider churn must show up as configuration reloads in the reloads panel's metric.
  local reloads
  reloads=$(curl -fsS "http://127.0.0.1:$prom_port/api/v1/query" \
    --data-urlencode 'query=max(traefik_config_reloads_total) - min(min_over_time(traefik_config_reloads_total[5m]))' |
    python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(int(float(r[0]["value"][1])) if r else 0)')
  [ "$reloads" -ge 5 ] || die "expected at least 5 Traefik configuration reloads from 6 server-list changes, saw $reloads"
  if [ -n "$render_dir" ]; then
    python3 "$BENCH_ROOT/dashboards/generator/render.py" "$BENCH_ROOT/dashboards/controllers.json" \
      --prometheus "http://127.0.0.1:$prom_port" --testid "$testid" --start "$((start - 5))" --end now \
      --rate-interval 15s --out "$render_dir/controllers.svg"
  fi
  echo "verify-traefik: ok ($testid, Traefik $("$TRAEFIK" version | sed -n 's/^Version: *//p'), $reloads configuration reloads)"
}

main "$@"

#!/usr/bin/env bash
# Installs Grafana's published dashboard schema (npm @grafana/schema) and the TypeScript compiler
# that checks dashboards against it, at the versions ci/tools/dashboards/schema/package-lock.json
# pins (with their registry integrity hashes), into $BENCH_CACHE once; a warm run compares a stamp.
# Prints the folder holding node_modules/ (ci/tools/dashboards/schema_check.py --tools takes it).
# Usage: ci/tools/grafana-schema.sh
. "$(dirname "$0")/../lib/common.sh"

# @grafana/schema 13.2.3: the newest release on npm (2026-11-24); Grafana's own TypeScript types
# of the dashboard JSON model (v1, what the provisioning sidecar loads) and of each core panel's
# options. typescript 5.9.3: the last 5.x, a plain-JavaScript compiler that runs on Debian's Node 20
# (6.0 is the bridge release to 7.x, the native port shipped as per-platform binaries).
SPEC="$BENCH_ROOT/ci/tools/dashboards/schema"

install_grafana_schema() {
  local stamp dir lock_fd
  stamp=$(cat "$SPEC/package.json" "$SPEC/package-lock.json" | sha256sum | cut -c1-16)
  dir="$BENCH_CACHE/npm/grafana-schema-$stamp"
  mkdir -p "$BENCH_CACHE/npm"
  exec {lock_fd}>"$BENCH_CACHE/npm/grafana-schema.lock"
  flock "$lock_fd"
  if [ ! -f "$dir/.installed" ]; then
    command -v npm > /dev/null || apt_install npm
    log "installing @grafana/schema and typescript from npm (ci/tools/dashboards/schema/package-lock.json)"
    rm -rf "$dir"; mkdir -p "$dir"
    cp "$SPEC/package.json" "$SPEC/package-lock.json" "$dir/"
    # npm ci: exactly the lock's versions, each checked against its integrity hash; no scripts run.
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error > /dev/null)
    touch "$dir/.installed"
  fi
  exec {lock_fd}>&-
  printf '%s\n' "$dir"
}

install_grafana_schema

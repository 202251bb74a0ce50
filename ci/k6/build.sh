#!/usr/bin/env bash
# Builds the k6 runner binary: k6 + the xk6-kubernetes extension, from the Go module proxy, without
# Docker or xk6. Output: $BENCH_CACHE/bin/k6, linked into .tools/bin/k6. A warm run is a stamp check.
# Usage: ci/k6/build.sh            (prints the binary path on stdout)
. "$(dirname "$0")/../lib/common.sh"

# k6 v0.51.0: the newest k6 that xk6-kubernetes v0.9.0 builds against (it still uses goja's k6 APIs).
K6_VERSION=v0.51.0
# xk6-kubernetes v0.9.0: v0.10+ needs k6 v1 and is refused by the Go proxy mirror here.
XK6_KUBERNETES_VERSION=v0.9.0

k6_out="$BENCH_CACHE/bin/k6"
k6_stamp="k6 $K6_VERSION xk6-kubernetes $XK6_KUBERNETES_VERSION $(go env GOVERSION)"

# write_k6_module DIR: the module xk6 would generate: k6's command line plus a blank import of the
# extension, which registers the k6/x/kubernetes JS module in its init().
write_k6_module() {
  local dir=$1
  rm -rf "$dir"; mkdir -p "$dir"
  cat > "$dir/main.go" <<'GO'
// Command k6 is k6 with the xk6-kubernetes extension compiled in.
package main

import (
	k6cmd "go.k6.io/k6/cmd"

	_ "github.com/grafana/xk6-kubernetes"
)

func main() {
	k6cmd.Execute()
}
GO
  (cd "$dir" && go mod init bench.local/build/k6 >/dev/null 2>&1)
}

build_k6() {
  local mod="$BENCH_CACHE/mod/k6" t0=$SECONDS
  log "building k6 $K6_VERSION + xk6-kubernetes $XK6_KUBERNETES_VERSION (about 4 min cold)"
  write_k6_module "$mod"
  (
    cd "$mod"
    # The download log is long: keep it in a file and show it only when something fails.
    go get "go.k6.io/k6@$K6_VERSION" "github.com/grafana/xk6-kubernetes@$XK6_KUBERNETES_VERSION" \
      >go-get.log 2>&1 || { cat go-get.log >&2; die "go get of k6/xk6-kubernetes failed (log above)"; }
    go mod tidy >>go-get.log 2>&1 || { cat go-get.log >&2; die "go mod tidy failed (log above)"; }
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$k6_out.tmp" .
  )
  mv "$k6_out.tmp" "$k6_out"
  printf '%s\n' "$k6_stamp" > "$k6_out.stamp"
  log "built k6 in $((SECONDS - t0)) s: $("$k6_out" version | head -n 1)"
}

mkdir -p "$BENCH_CACHE/bin" "$BENCH_TOOLS/bin"
# Several parts (images, tests) call this script, possibly at once: one build at a time.
exec 9>"$BENCH_CACHE/bin/k6.lock"
flock 9
if [ ! -x "$k6_out" ] || [ "$(cat "$k6_out.stamp" 2>/dev/null)" != "$k6_stamp" ]; then
  build_k6
fi
ln -sf "$k6_out" "$BENCH_TOOLS/bin/k6"
echo "$k6_out"

#!/usr/bin/env bash
# Builds bench-stream, the long-lived experiment's stream backend, from this checkout into
# $BENCH_CACHE/bin/bench-stream (static, linked into .tools/bin), for the tests and the image
# definitions. Its dependencies come from the Go module proxy at the versions go.sum pins. A warm
# run is a stamp check: the hash of the sources and go.mod/go.sum, and the Go version.
# Usage: backends/stream/build.sh            (prints the binary path on stdout)
. "$(dirname "$0")/../../lib/common.sh"

src="$BENCH_ROOT/backends/stream"
out="$BENCH_CACHE/bin/bench-stream"
# Test files do not change the binary.
hash=$(cd "$src" && find . -maxdepth 1 \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) -print0 \
  | LC_ALL=C sort -z | xargs -0 cat | sha256sum | cut -c1-12)
stamp="bench-stream $hash $(go env GOVERSION)"

mkdir -p "$BENCH_CACHE/bin" "$BENCH_TOOLS/bin"
# Test parts and image builds may call this at once: one build at a time.
exec 9>"$out.lock"
flock 9
if [ ! -x "$out" ] || [ "$(cat "$out.stamp" 2>/dev/null)" != "$stamp" ]; then
  log "building bench-stream ($hash)"
  t0=$SECONDS
  # -mod=readonly: go.mod and go.sum are the pins; a build never rewrites them.
  (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w" -o "$out.tmp" .)
  mv "$out.tmp" "$out"
  printf '%s\n' "$stamp" > "$out.stamp"
  log "built bench-stream in $((SECONDS - t0)) s"
fi
ln -sf "$out" "$BENCH_TOOLS/bin/bench-stream"
echo "$out"

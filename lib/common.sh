# Shell helpers every bench script shares: the product's (scenarios/runner, scenarios/calibrate,
# dashboards/report) and, through ci/lib/common.sh, the test harness's. Product scripts source this
# file and never anything under ci/. Source it: . "$(dirname "$0")/../../lib/common.sh"
# Every script that sources it runs with `set -euo pipefail`.
set -euo pipefail

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Stable cache outside the clone: CI clones afresh each run, so binaries built here survive
# between runs and a warm "build" is a version-stamp check.
BENCH_CACHE=${BENCH_CACHE:-$HOME/.cache/bench}
# Git-ignored folder in the clone where tools are linked for PATH.
BENCH_TOOLS=${BENCH_TOOLS:-$BENCH_ROOT/.tools}
export BENCH_ROOT BENCH_CACHE BENCH_TOOLS
export PATH="$BENCH_TOOLS/bin:$PATH"
# k6 must never phone home or try to resolve extensions from the internet.
export K6_NO_USAGE_REPORT=true K6_AUTO_EXTENSION_RESOLUTION=false

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# free_port: prints a TCP port nothing listens on at 127.0.0.1 (the kernel picks it).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# apt_install PKG...: installs Debian packages that are not yet installed (apt-get update once).
# One install at a time on the machine (test lanes run in parallel; dpkg's own lock would make the
# second apt-get fail, not wait).
apt_install() {
  local lock_fd rc=0
  exec {lock_fd}>"${BENCH_APT_LOCK:-/run/lock/bench-apt.lock}"
  flock "$lock_fd"
  apt_install_locked "$@" || rc=$?
  exec {lock_fd}>&-
  return $rc
}

apt_install_locked() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# go_build_tool NAME STAMP PKG [GO_GET_ARGS...] -- builds Go package PKG into $BENCH_CACHE/bin/NAME
# through a throwaway module (`go install pkg@ver` fails for a module whose go.mod has replace lines
# or whose version list the proxy refuses; `go get` + `go build` of the package path works). STAMP (usually the version) is written
# beside the binary; a matching stamp skips the build, so warm runs take milliseconds.
# GO_GET_ARGS are module@version pins passed to `go get`. Extra env: GO_BUILD_FLAGS, GO_MOD_EXTRA
# (lines appended to go.mod, e.g. replace directives), GO_MAIN_FILE (copied in as the module's
# main.go, for PKG "."), GONOSUMDB.
# The binary is linked into $BENCH_TOOLS/bin. One builder per tool at a time: a second caller
# (two test parts run at once) waits on the tool's lock, then finds the stamp and returns.
go_build_tool() {
  local lock_fd
  mkdir -p "$BENCH_CACHE/bin"
  exec {lock_fd}>"$BENCH_CACHE/bin/$1.lock"
  flock "$lock_fd"
  build_tool_once "$@"
  exec {lock_fd}>&-
}

build_tool_once() {
  local name=$1 stamp=$2 pkg=$3; shift 3
  local out="$BENCH_CACHE/bin/$name"
  mkdir -p "$BENCH_TOOLS/bin"
  if [ -x "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
    ln -sf "$out" "$BENCH_TOOLS/bin/$name"
    return 0
  fi
  local mod="$BENCH_CACHE/mod/$name"
  rm -rf "$mod"; mkdir -p "$mod"
  log "building $name ($stamp) from the Go module proxy"
  local t0=$SECONDS
  (
    cd "$mod"
    go mod init "bench.local/build/$name" >/dev/null 2>&1
    if [ -n "${GO_MOD_EXTRA:-}" ]; then printf '%s\n' "$GO_MOD_EXTRA" >> go.mod; fi
    if [ -n "${GO_MAIN_FILE:-}" ]; then cp "$GO_MAIN_FILE" main.go; fi
    go get "$@" >/dev/null
    # shellcheck disable=SC2086
    CGO_ENABLED=${CGO_ENABLED:-0} go build -trimpath ${GO_BUILD_FLAGS:-} -o "$out.tmp" "$pkg"
  )
  mv "$out.tmp" "$out"
  printf '%s\n' "$stamp" > "$out.stamp"
  ln -sf "$out" "$BENCH_TOOLS/bin/$name"
  log "built $name in $((SECONDS - t0)) s"
}


#!/usr/bin/env bash
# Builds the runner's k6 binary from the Go module proxy: k6, xk6-kubernetes (adapted to k6 v1 by
# patch-xk6-kubernetes.sh) and bench's own extension (xk6-bench, from this folder). The one build of
# it: scenarios/runner/build.sh runs it for the local binary and the Dockerfile's build stage for the
# image, so both are the same program. The module it writes is the one xk6 would generate (k6's
# command plus a blank import per extension), with a `replace` for each local extension.
# Then it checks that the binary lists both extensions in `k6 version`: a k6 whose command and
# extensions import different k6 modules (k6 v2's go.k6.io/k6/v2 against an extension's go.k6.io/k6)
# links without a word and fails every script with "unknown modules".
# Usage: build-k6.sh OUT WORKDIR   (K6_VERSION and XK6_KUBERNETES_VERSION from the environment:
#                                   scenarios/runner/versions.env; needs bash, go, awk, grep)
set -euo pipefail

out=${1:?usage: build-k6.sh OUT WORKDIR}
work=${2:?usage: build-k6.sh OUT WORKDIR}
: "${K6_VERSION:?K6_VERSION is required (scenarios/runner/versions.env)}"
: "${XK6_KUBERNETES_VERSION:?XK6_KUBERNETES_VERSION is required (scenarios/runner/versions.env)}"
runner_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The JS modules the runner's scripts import: each extension must register its own.
EXTENSION_MODULES="k6/x/kubernetes k6/x/bench"

fail() { printf 'build-k6: %s\n' "$*" >&2; exit 1; }

# module_dir MODULE@VERSION: where `go mod download` unpacked it (read-only in the module cache).
module_dir() {
  local dir
  dir=$(cd "$work" && go mod download -json "$1" | awk -F'"' '$2 == "Dir" { print $4 }')
  [ -n "$dir" ] && [ -d "$dir" ] || fail "go mod download $1 gave no directory"
  printf '%s\n' "$dir"
}

# check_extensions BINARY: BINARY's `k6 version` lists every module of EXTENSION_MODULES.
check_extensions() {
  local listed module missing=()
  listed=$("$1" version 2>&1) || fail "$1 version failed: $listed"
  for module in $EXTENSION_MODULES; do
    grep -qF "$module" <<<"$listed" || missing+=("$module")
  done
  [ ${#missing[@]} -eq 0 ] || fail "the built k6 does not register ${missing[*]}: its command and the extensions" \
    "import different k6 modules (k6 v2 needs extensions built for go.k6.io/k6/v2). k6 version said: $listed"
}

# Sourced by a test (check_extensions): nothing is built then.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

rm -rf "$work"
mkdir -p "$work/k6"
cd "$work/k6"
go mod init bench.local/build/k6 >/dev/null 2>&1

# xk6-kubernetes as the proxy serves it, copied out of the module cache and patched.
cp -R "$(module_dir "github.com/grafana/xk6-kubernetes@$XK6_KUBERNETES_VERSION")" "$work/xk6-kubernetes"
bash "$runner_dir/patch-xk6-kubernetes.sh" "$work/xk6-kubernetes"

cat > main.go <<'GO'
// Command k6 is k6 with the xk6-kubernetes and bench (scenarios/runner/xk6-bench) extensions compiled in.
package main

import (
	k6cmd "go.k6.io/k6/cmd"

	_ "bench.local/xk6-bench"
	_ "github.com/grafana/xk6-kubernetes"
)

func main() {
	k6cmd.Execute()
}
GO
go mod edit -replace "bench.local/xk6-bench=$runner_dir/xk6-bench" \
  -replace "github.com/grafana/xk6-kubernetes=$work/xk6-kubernetes" \
  -require "github.com/grafana/xk6-kubernetes@$XK6_KUBERNETES_VERSION"
# The download log is long: keep it in a file and show it only when something fails.
go get "go.k6.io/k6@$K6_VERSION" >go-get.log 2>&1 || { cat go-get.log >&2; fail "go get go.k6.io/k6@$K6_VERSION failed (log above)"; }
go mod tidy >>go-get.log 2>&1 || { cat go-get.log >&2; fail "go mod tidy failed (log above)"; }
# tidy may move k6 up or down to what the extensions require: the pin is what ships.
built=$(go list -m -f '{{.Version}}' go.k6.io/k6)
[ "$built" = "$K6_VERSION" ] || fail "the module resolved go.k6.io/k6 $built, not the pinned $K6_VERSION"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out.tmp" .
check_extensions "$out.tmp"
mv "$out.tmp" "$out"

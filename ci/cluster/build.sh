#!/usr/bin/env bash
# Builds the cluster's binaries from the Go module proxy into $BENCH_CACHE/bin and links them into
# .tools/bin: kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl,
# etcd (the v3.6 release that Kubernetes itself pins) and CoreDNS. A version stamp beside the
# binaries makes a warm run a few file reads. Debian packages of the runtime are installed too.
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/ci/cluster/config.sh"

K8S_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

install_runtime_packages() {
  # containerd 1.6, runc 1.1, CNI plugins 1.1 (bridge, host-local, loopback, portmap): Debian 12's.
  # conntrack and iptables for kube-proxy; openssl for certificates; mmdebstrap for images.
  apt_install containerd runc containernetworking-plugins iptables conntrack openssl iproute2 curl \
    mmdebstrap jq gcc libc6-dev
}

# k8s_staging_replaces GOMOD: one `replace` line per staging module of k8s.io/kubernetes. Its go.mod
# points them at ./staging; outside the repo they are the published k8s.io/<name> v0.<minor>.<patch>.
k8s_staging_replaces() {
  local staging_version="v0.${BENCH_K8S_VERSION#v1.}"
  sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#replace \1 => \1 '"$staging_version"'#p' "$1"
}

# build_kubernetes: one wrapper module requiring k8s.io/kubernetes, one `go build` for all binaries
# (shared compile of the common packages). etcd comes from the same module graph.
build_kubernetes() {
  local gomod etcd_version stamp mod="$BENCH_CACHE/mod/kubernetes" bin="$BENCH_CACHE/bin"
  mkdir -p "$bin" "$BENCH_TOOLS/bin"
  stamp="kubernetes $BENCH_K8S_VERSION"
  if k8s_binaries_current "$stamp"; then
    link_k8s_binaries
    return 0
  fi
  log "building Kubernetes $BENCH_K8S_VERSION and etcd from the Go module proxy (cold: about 15 min)"
  local t0=$SECONDS
  rm -rf "$mod"; mkdir -p "$mod"
  cd "$mod"
  go mod init bench.local/build/kubernetes >/dev/null 2>&1
  gomod=$(go mod download -json "k8s.io/kubernetes@$BENCH_K8S_VERSION" | jq -r .GoMod)
  [ -s "$gomod" ] || die "could not download k8s.io/kubernetes@$BENCH_K8S_VERSION from the Go proxy"
  k8s_staging_replaces "$gomod" >> go.mod
  [ "$(grep -c '^replace ' go.mod)" -ge 30 ] || die "expected about 31 staging replaces from $gomod, got $(grep -c '^replace ' go.mod)"
  etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2; exit}' "$gomod")
  [ -n "$etcd_version" ] || die "k8s.io/kubernetes@$BENCH_K8S_VERSION go.mod does not pin go.etcd.io/etcd/server/v3"
  local pkgs=() b
  for b in "${K8S_BINARIES[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  # Package paths (not the module root) so go.sum gets every module the packages import.
  go get "${pkgs[@]/%/@$BENCH_K8S_VERSION}" "go.etcd.io/etcd/server/v3@$etcd_version" \
    2>"$mod/get.log" || { cat "$mod/get.log" >&2; die "go get of Kubernetes $BENCH_K8S_VERSION failed (log above)"; }
  local v=k8s.io/component-base/version cv=k8s.io/client-go/pkg/version minor
  minor=$(echo "$BENCH_K8S_VERSION" | cut -d. -f2)
  local ldflags="-s -w"
  local pfx
  for pfx in $v $cv; do
    ldflags+=" -X $pfx.gitVersion=$BENCH_K8S_VERSION -X $pfx.gitMajor=1 -X $pfx.gitMinor=$minor"
    ldflags+=" -X $pfx.gitTreeState=clean -X $pfx.buildDate=1970-01-01T00:00:00Z"
  done
  mkdir -p "$mod/out"
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$mod/out/" "${pkgs[@]}"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$mod/out/etcd" go.etcd.io/etcd/server/v3
  for b in "${K8S_BINARIES[@]}" etcd; do mv "$mod/out/$b" "$bin/$b"; done
  printf '%s etcd %s\n' "$stamp" "$etcd_version" > "$bin/kubernetes.stamp"
  link_k8s_binaries
  log "built Kubernetes $BENCH_K8S_VERSION + etcd $etcd_version in $((SECONDS - t0)) s"
}

k8s_binaries_current() {
  local b
  for b in "${K8S_BINARIES[@]}" etcd; do [ -x "$BENCH_CACHE/bin/$b" ] || return 1; done
  [ "$(cut -d' ' -f1-2 "$BENCH_CACHE/bin/kubernetes.stamp" 2>/dev/null)" = "$1" ]
}

link_k8s_binaries() {
  local b
  for b in "${K8S_BINARIES[@]}" etcd; do ln -sf "$BENCH_CACHE/bin/$b" "$BENCH_TOOLS/bin/$b"; done
}

build_coredns() {
  # Only the Corefile's plugins (ci/cluster/coredns/main.go); -s drops the symbol table and DWARF.
  GO_MAIN_FILE="$BENCH_ROOT/ci/cluster/coredns/main.go" GO_BUILD_FLAGS=-ldflags=-s \
    go_build_tool coredns "$BENCH_COREDNS_VERSION corefile-plugins" . \
    "github.com/coredns/coredns@$BENCH_COREDNS_VERSION"
}

main() {
  local t0=$SECONDS
  install_runtime_packages
  mkdir -p "$BENCH_CACHE"
  # Image defs and test parts may call this script at the same time: one build at a time.
  exec 8>"$BENCH_CACHE/cluster-build.lock"
  flock 8
  (build_kubernetes)
  build_coredns
  log "cluster binaries ready in $((SECONDS - t0)) s"
}

main "$@"

# Cluster DNS: CoreDNS built from the Go module proxy (ci/cluster/build.sh), one static binary.
# ci/cluster/up.sh supplies the Corefile (ConfigMap) and runs it unprivileged on port 1053.
# Tagged with the release ci/versions.env pins (ci/cluster/config.sh, which build.sh sources).
IMAGE_REF=bench/coredns:$BENCH_COREDNS_VERSION
IMAGE_PACKAGES=()
IMAGE_ENTRYPOINT=(/coredns)
IMAGE_CMD=(-conf /etc/coredns/Corefile)
IMAGE_USER=65532:65532

image_add_files() {
  local bin="$BENCH_CACHE/bin/coredns"
  [ -x "$bin" ] || bash "$BENCH_ROOT/ci/cluster/build.sh"
  install -D -m 0755 "$bin" "$1/coredns"
}

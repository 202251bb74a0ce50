# k6-operator manager built from the Go module proxy by ci/e2e/build-binaries.sh: a static binary at
# /manager (the path its own manifests use). Runs as a non-root uid. Tagged with the release
# ci/versions.env pins (K6_OPERATOR_VERSION, set by ci/cluster/config.sh, which build.sh sources).
IMAGE_REF=bench/k6-operator:$K6_OPERATOR_VERSION
IMAGE_PACKAGES=()
IMAGE_ENTRYPOINT=(/manager)
IMAGE_USER=65532:65532

image_add_files() {
  bash "$BENCH_ROOT/ci/e2e/build-binaries.sh" k6-operator
  install -D -m 0755 "$BENCH_CACHE/bin/k6-operator" "$1/manager"
}

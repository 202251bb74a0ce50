# Traefik built from the Go module proxy by ci/e2e/build-binaries.sh: a static binary alone (it needs
# no shell or libraries; the pod mounts /tmp). Runs as a non-root uid. Tagged with the release the
# preset values/traefik.yaml pins (ci/e2e/manifests/traefik.yaml runs that tag).
IMAGE_REF=bench/traefik:$(bash "$BENCH_ROOT/ci/e2e/build-binaries.sh" traefik-version)
IMAGE_PACKAGES=()
IMAGE_ENTRYPOINT=(/usr/local/bin/traefik)
IMAGE_USER=65532:65532

image_add_files() {
  bash "$BENCH_ROOT/ci/e2e/build-binaries.sh" traefik
  install -D -m 0755 "$BENCH_CACHE/bin/traefik" "$1/usr/local/bin/traefik"
}

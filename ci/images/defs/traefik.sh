# Traefik v3.6.12 built from the Go module proxy by ci/e2e/build-binaries.sh: a static binary alone
# (it needs no shell or libraries; the pod mounts /tmp). Runs as a non-root uid.
IMAGE_REF=bench/traefik:v3.6.12
IMAGE_PACKAGES=()
IMAGE_ENTRYPOINT=(/usr/local/bin/traefik)
IMAGE_USER=65532:65532

image_add_files() {
  bash "$BENCH_ROOT/ci/e2e/build-binaries.sh" traefik
  install -D -m 0755 "$BENCH_CACHE/bin/traefik" "$1/usr/local/bin/traefik"
}

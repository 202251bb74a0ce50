# long-lived's stream backend (backends/stream): bench-stream, one static Go binary, no Debian root,
# the same binary the scenarios part tests (backends/stream/build.sh). Users build the same server
# with backends/stream/Dockerfile (`make stream-image`). The chart runs it as 65532 on :8080.
IMAGE_REF=bench/stream:local
IMAGE_PACKAGES=()
IMAGE_ENTRYPOINT=(/bench-stream)
IMAGE_USER=65532:65532

image_add_files() {
  local bin
  bin=$(bash "$BENCH_ROOT/backends/stream/build.sh")
  install -D -m 0755 "$bin" "$1/bench-stream"
}

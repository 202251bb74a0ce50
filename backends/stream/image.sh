#!/usr/bin/env bash
# Builds the stream backend's image (bench-stream, backends/stream/Dockerfile, the versions of
# backends/stream/versions.env) and pushes it, or loads it into a kind cluster. No public image has
# it, so users of loadtest.scenario long-lived run this once:
#   make stream-image IMAGE=registry.example.com/bench/stream:<tag>          (build + push)
#   make stream-image IMAGE=bench/stream:<tag> KIND_CLUSTER=kind             (build + kind load)
# Uses docker, podman or buildah, whichever is found first (BENCH_IMAGE_BUILDER=podman picks one).
# It prints the --set flags that point charts/bench at the image. The steps: lib/image.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/common.sh"
. "$BENCH_ROOT/lib/image.sh"

# version_build_args: one `--build-arg KEY=value` pair per pin of backends/stream/versions.env.
version_build_args() { pin_build_args "$BENCH_ROOT/backends/stream/versions.env"; }

# Run, not sourced (ci/test/chart/test_pins.py sources it for version_build_args).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  image_main stream-image "$BENCH_ROOT/backends/stream/Dockerfile" "$BENCH_ROOT/backends/stream/versions.env" \
    loadtest.longLived.image "$@"
fi

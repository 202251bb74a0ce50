#!/usr/bin/env bash
# Builds the k6 runner image (k6 + xk6-kubernetes + bench's extension, scenarios/runner/Dockerfile, the
# versions of scenarios/runner/versions.env) and pushes it, or loads it into a kind cluster. No public
# image has that combination, so every user runs this once:
#   make runner-image IMAGE=registry.example.com/bench/k6:<tag>              (build + push)
#   make runner-image IMAGE=bench/k6:<tag> KIND_CLUSTER=kind                 (build + kind load)
# Uses docker, podman or buildah, whichever is found first (BENCH_IMAGE_BUILDER=podman picks one).
# It prints the --set flags that point charts/bench at the image. The steps: lib/image.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/common.sh"
. "$BENCH_ROOT/lib/image.sh"

# version_build_args: one `--build-arg KEY=value` pair per pin of scenarios/runner/versions.env.
version_build_args() { pin_build_args "$BENCH_ROOT/scenarios/runner/versions.env"; }

# Run, not sourced (ci/test/chart/test_pins.py sources it for version_build_args).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  image_main runner-image "$BENCH_ROOT/scenarios/runner/Dockerfile" "$BENCH_ROOT/scenarios/runner/versions.env" \
    loadtest.runner.image "$@"
fi

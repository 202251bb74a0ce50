#!/usr/bin/env bash
# Builds the k6 runner image (k6 + xk6-kubernetes + bench's extension, scenarios/runner/Dockerfile, the
# versions of scenarios/runner/versions.env) and pushes it, or loads it into a kind cluster. No public
# image has that combination, so every user runs this once:
#   make runner-image IMAGE=registry.example.com/bench/k6:<tag>              (build + push)
#   make runner-image IMAGE=bench/k6:<tag> KIND_CLUSTER=kind                 (build + kind load)
# Uses docker, podman or buildah, whichever is found first (BENCH_IMAGE_BUILDER=podman picks one).
# It prints the --set flags that point charts/bench at the image.
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/common.sh"

usage() { die "usage: make runner-image IMAGE=<registry/repo:tag> [KIND_CLUSTER=<kind cluster name>]"; }

# pick_builder: the first of docker, podman, buildah on PATH (or BENCH_IMAGE_BUILDER).
pick_builder() {
  local b
  for b in ${BENCH_IMAGE_BUILDER:-docker podman buildah}; do
    command -v "$b" >/dev/null && { echo "$b"; return; }
  done
  die "no image builder found: install docker, podman or buildah (or build scenarios/runner/Dockerfile your own way)"
}

# image_repository IMAGE / image_tag IMAGE: the chart's two keys (the tag is empty when IMAGE has
# none or is pinned by digest: the repository key then carries the whole reference).
image_has_tag() { local last=${1##*/}; [[ $1 != *@* && $last == *:* ]]; }
image_repository() { if image_has_tag "$1"; then echo "${1%:*}"; else echo "$1"; fi; }
image_tag() { if image_has_tag "$1"; then echo "${1##*:}"; fi; }

# version_build_args: one `--build-arg KEY=value` pair per pin of scenarios/runner/versions.env
# (the Dockerfile's ARGs have no defaults: the pin file is their one source).
version_build_args() {
  local pins="$BENCH_ROOT/scenarios/runner/versions.env" key
  # shellcheck source=versions.env
  . "$pins"
  for key in $(sed -n 's/^\([A-Z][A-Z0-9_]*\)=.*/\1/p' "$pins"); do
    printf '%s\n' --build-arg "$key=${!key}"
  done
}

build_image() {
  local builder=$1 image=$2 args
  mapfile -t args < <(version_build_args)
  [ ${#args[@]} -gt 0 ] || die "no versions read from scenarios/runner/versions.env"
  log "building $image with $builder from scenarios/runner/Dockerfile (${args[*]})"
  case $builder in
    buildah) buildah bud "${args[@]}" -t "$image" -f "$BENCH_ROOT/scenarios/runner/Dockerfile" "$BENCH_ROOT" ;;
    *) "$builder" build "${args[@]}" -t "$image" -f "$BENCH_ROOT/scenarios/runner/Dockerfile" "$BENCH_ROOT" ;;
  esac
}

publish_image() {
  local builder=$1 image=$2 kind_cluster=$3 archive
  if [ -z "$kind_cluster" ]; then
    log "pushing $image"
    "$builder" push "$image"
    return
  fi
  command -v kind >/dev/null || die "KIND_CLUSTER is set but 'kind' is not on PATH"
  log "loading $image into kind cluster $kind_cluster"
  if [ "$builder" = docker ]; then
    kind load docker-image "$image" --name "$kind_cluster"
  else
    # podman and buildah: through an archive (kind reads docker-archive tars)
    archive=$(mktemp "${TMPDIR:-/tmp}/bench-runner-image.XXXXXX.tar")
    trap 'rm -f "$archive"' EXIT
    "$builder" push "$image" "docker-archive:$archive:$image"
    kind load image-archive "$archive" --name "$kind_cluster"
  fi
}

main() {
  local image=${1:-} kind_cluster=${2:-} builder repo tag
  [ -n "$image" ] || usage
  [[ $image =~ ^[^[:space:]]+$ ]] || usage
  builder=$(pick_builder)
  build_image "$builder" "$image"
  publish_image "$builder" "$image" "$kind_cluster"
  repo=$(image_repository "$image")
  tag=$(image_tag "$image")
  echo "Runner image ready. Install with:"
  echo "  --set loadtest.runner.image.repository=$repo,loadtest.runner.image.tag=$tag"
}

# Run, not sourced (ci/test/chart/test_pins.py sources it for version_build_args).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi

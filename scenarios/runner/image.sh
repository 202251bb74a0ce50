#!/usr/bin/env bash
# Builds the k6 runner image (k6 v0.51.0 + xk6-kubernetes v0.9.0, scenarios/runner/Dockerfile) and pushes it,
# or loads it into a kind cluster. No public image has that pair, so every user runs this once:
#   make runner-image IMAGE=registry.example.com/bench/k6:v0.51.0            (build + push)
#   make runner-image IMAGE=bench/k6:v0.51.0 KIND_CLUSTER=kind               (build + kind load)
# Uses docker, podman or buildah, whichever is found first (BENCH_IMAGE_BUILDER=podman picks one).
# It prints the --set flags that point charts/bench at the image.
. "$(dirname "$0")/../../lib/common.sh"

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

build_image() {
  local builder=$1 image=$2
  log "building $image with $builder from scenarios/runner/Dockerfile (k6 v0.51.0 + xk6-kubernetes v0.9.0)"
  case $builder in
    buildah) buildah bud -t "$image" -f "$BENCH_ROOT/scenarios/runner/Dockerfile" "$BENCH_ROOT" ;;
    *) "$builder" build -t "$image" -f "$BENCH_ROOT/scenarios/runner/Dockerfile" "$BENCH_ROOT" ;;
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

main "$@"

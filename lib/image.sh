# Builds one of bench's own images from its Dockerfile and pushes it, or loads it into a kind
# cluster: the runner (scenarios/runner/image.sh, `make runner-image`) and the stream backend
# (backends/stream/image.sh, `make stream-image`). No public registry has either, so users run these.
# Uses docker, podman or buildah, whichever is found first (BENCH_IMAGE_BUILDER=podman picks one).
# Source it after lib/common.sh.

# pick_builder: the first of docker, podman, buildah on PATH (or BENCH_IMAGE_BUILDER).
pick_builder() {
  local b
  for b in ${BENCH_IMAGE_BUILDER:-docker podman buildah}; do
    command -v "$b" >/dev/null && { echo "$b"; return; }
  done
  die "no image builder found: install docker, podman or buildah (or build the Dockerfile your own way)"
}

# image_repository IMAGE / image_tag IMAGE: the chart's two keys (the tag is empty when IMAGE has
# none or is pinned by digest: the repository key then carries the whole reference).
image_has_tag() { local last=${1##*/}; [[ $1 != *@* && $last == *:* ]]; }
image_repository() { if image_has_tag "$1"; then echo "${1%:*}"; else echo "$1"; fi; }
image_tag() { if image_has_tag "$1"; then echo "${1##*:}"; fi; }

# pin_build_args PINS: one `--build-arg KEY=value` pair per pin of the file PINS (KEY=value lines;
# the Dockerfiles' ARGs have no defaults: the pin file is their one source).
pin_build_args() {
  local pins=$1 key
  # shellcheck source=/dev/null
  . "$pins"
  for key in $(sed -n 's/^\([A-Z][A-Z0-9_]*\)=.*/\1/p' "$pins"); do
    printf '%s\n' --build-arg "$key=${!key}"
  done
}

# build_image BUILDER IMAGE DOCKERFILE PINS: build IMAGE from DOCKERFILE (context: the repository
# root) with the pins of PINS as build arguments.
build_image() {
  local builder=$1 image=$2 dockerfile=$3 pins=$4 args
  mapfile -t args < <(pin_build_args "$pins")
  [ ${#args[@]} -gt 0 ] || die "no versions read from ${pins#"$BENCH_ROOT"/}"
  log "building $image with $builder from ${dockerfile#"$BENCH_ROOT"/} (${args[*]})"
  case $builder in
    buildah) buildah bud "${args[@]}" -t "$image" -f "$dockerfile" "$BENCH_ROOT" ;;
    *) "$builder" build "${args[@]}" -t "$image" -f "$dockerfile" "$BENCH_ROOT" ;;
  esac
}

# publish_image BUILDER IMAGE [KIND_CLUSTER]: push IMAGE, or load it into the kind cluster.
publish_image() {
  local builder=$1 image=$2 kind_cluster=${3:-} archive
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
    archive=$(mktemp "${TMPDIR:-/tmp}/bench-image.XXXXXX.tar")
    trap 'rm -f "$archive"' EXIT
    "$builder" push "$image" "docker-archive:$archive:$image"
    kind load image-archive "$archive" --name "$kind_cluster"
  fi
}

# image_main WHAT DOCKERFILE PINS KEY IMAGE [KIND_CLUSTER]: build and publish IMAGE, then print the
# --set flags that point charts/bench at it (KEY: the values key of the image, e.g. loadtest.runner.image).
image_main() {
  local what=$1 dockerfile=$2 pins=$3 key=$4 image=${5:-} kind_cluster=${6:-} builder
  [[ $image =~ ^[^[:space:]]+$ ]] || die "usage: make $what IMAGE=<registry/repo:tag> [KIND_CLUSTER=<kind cluster name>]"
  builder=$(pick_builder)
  build_image "$builder" "$image" "$dockerfile" "$pins"
  publish_image "$builder" "$image" "$kind_cluster"
  echo "Image ready. Install with:"
  echo "  --set $key.repository=$(image_repository "$image"),$key.tag=$(image_tag "$image")"
}

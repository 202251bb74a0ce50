#!/usr/bin/env bash
# Builds OCI images without a registry and imports them into the local cluster's containerd.
#   ci/images/build.sh [--no-import] [NAME...]
# NAME is a file ci/images/defs/NAME.sh (the contract is in ci/images/README.md); no NAME = all.
# Layers: a Debian root from mmdebstrap (cached per package set, shared by images with the same
# set) plus one layer of the def's own files. An image whose manifest digest is unchanged and
# already imported is skipped; otherwise it is imported with one `ctr images import` per image.
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/ci/cluster/config.sh"

IMAGES_DIR="$BENCH_ROOT/ci/images"
IMAGES_CACHE="$BENCH_CACHE/images"
# Debian release of every image root: the same as the host, so host-built binaries and configs fit.
IMAGE_SUITE=bookworm
IMAGE_MIRRORS=(
  "deb http://deb.debian.org/debian bookworm main"
  "deb http://deb.debian.org/debian bookworm-updates main"
  "deb http://deb.debian.org/debian-security bookworm-security main"
)
DEFAULT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

usage() {
  echo "usage: ci/images/build.sh [--no-import] [NAME...]; NAME is one of: $(list_image_names | tr '\n' ' ')" >&2
  exit 2
}

list_image_names() {
  local f
  for f in "$IMAGES_DIR"/defs/*.sh; do basename "$f" .sh; done
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# deterministic_tar DIR OUT: the same tree gives the same bytes (sorted, fixed times, numeric ids).
deterministic_tar() {
  tar --sort=name --mtime=@0 --numeric-owner --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    -C "$1" -cf "$2" .
}

# base_layer PACKAGE...: prints the path of the cached root tar for this package set, building it
# with mmdebstrap on a miss. The key is the sorted set, the suite and the mirrors.
base_layer() {
  local pkgs key out
  pkgs=$(printf '%s\n' "$@" | sort -u | paste -sd, -)
  key=$(printf '%s\n' "$IMAGE_SUITE" "$pkgs" "${IMAGE_MIRRORS[@]}" minbase-nodocs-v1 | sha256sum | cut -c1-16)
  out="$IMAGES_CACHE/base/$key.tar"
  if [ ! -f "$out" ] || [ ! -s "$out" ]; then
    rm -rf "$out" "$out.tmp"
    apt_install mmdebstrap
    mkdir -p "$IMAGES_CACHE/base"
    log "building base root ($pkgs) with mmdebstrap"
    local t0=$SECONDS attempt
    # Two tries: the Debian mirror answers a fetch with an error now and then. Its own output goes
    # to a log beside the root, shown only when both tries fail (with the free space, a full disk
    # being the other cause seen here).
    for attempt in 1 2; do
      if mmdebstrap --variant=minbase --format=tar --include="$pkgs" \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        "$IMAGE_SUITE" "$out.tmp" "${IMAGE_MIRRORS[@]}" </dev/null >"$out.log" 2>&1; then
        break
      fi
      rm -f "$out.tmp"
      if [ $attempt -eq 2 ]; then
        tail -n 20 "$out.log" >&2
        df -h "${TMPDIR:-/tmp}" "$IMAGES_CACHE" >&2
        die "mmdebstrap could not build the base root ($pkgs) from ${IMAGE_MIRRORS[*]} (log: $out.log)"
      fi
      log "mmdebstrap failed (try $attempt of 2): $(grep -m1 '^E:' "$out.log" | cut -c1-200)"
    done
    [ -s "$out.tmp" ] || die "mmdebstrap wrote no base root ($pkgs)"
    mv "$out.tmp" "$out"
    printf '%s\n' "$pkgs" > "$out.packages"
    sha256_of "$out" > "$out.sha256"
    log "base root ($pkgs) built in $((SECONDS - t0)) s: $(du -m "$out" | cut -f1) MB"
  fi
  echo "$out"
}

# add_blob LAYOUT FILE: stores FILE in the OCI layout by digest (hard link, no copy); prints digest.
add_blob() {
  local digest
  # Base roots are big and never change once built: their digest is kept beside them.
  if [ -f "$2.sha256" ] && [ "$2.sha256" -nt "$2" ]; then digest=$(cat "$2.sha256"); else digest=$(sha256_of "$2"); fi
  mkdir -p "$1/blobs/sha256"
  [ -e "$1/blobs/sha256/$digest" ] || ln "$2" "$1/blobs/sha256/$digest" 2>/dev/null || cp "$2" "$1/blobs/sha256/$digest"
  echo "$digest"
}

json_array() { if [ $# -eq 0 ]; then echo '[]'; else printf '%s\n' "$@" | jq -R . | jq -sc .; fi; }

# build_image NAME: runs in a subshell (the def's variables and function stay local to it).
build_image() {
  local name=$1 def="$IMAGES_DIR/defs/$1.sh" t0=$SECONDS
  [ -f "$def" ] || die "no image definition $def; known images: $(list_image_names | tr '\n' ' ')"
  IMAGE_REF="" IMAGE_PACKAGES=() IMAGE_ENTRYPOINT=() IMAGE_CMD=() IMAGE_USER="" IMAGE_ENV=()
  IMAGE_WORKDIR=/
  # shellcheck disable=SC1090
  . "$def"
  [[ "$IMAGE_REF" =~ ^bench/[a-z0-9-]+:[A-Za-z0-9._-]+$ ]] \
    || die "$def: IMAGE_REF '$IMAGE_REF' must look like bench/<name>:<tag> (ci/README.md, "Local images")"
  [ ${#IMAGE_ENTRYPOINT[@]} -gt 0 ] || [ ${#IMAGE_CMD[@]} -gt 0 ] || die "$def: set IMAGE_ENTRYPOINT or IMAGE_CMD"
  declare -F image_add_files >/dev/null || die "$def: define image_add_files ROOT (may do nothing)"

  local work="$IMAGES_CACHE/work/$name" layout="$IMAGES_CACHE/oci/$name"
  rm -rf "$work" "$layout"; mkdir -p "$work/root" "$layout"
  chmod 755 "$work/root"
  local layers=() base=""
  if [ ${#IMAGE_PACKAGES[@]} -gt 0 ]; then
    # a failed base must stop the image here: this may run where errexit is off (an `if` around it)
    base=$(base_layer "${IMAGE_PACKAGES[@]}") || die "$def: no base root for ${IMAGE_PACKAGES[*]}"
    layers+=("$(add_blob "$layout" "$base")")
  fi
  image_add_files "$work/root"
  if [ -n "$(ls -A "$work/root")" ]; then
    deterministic_tar "$work/root" "$work/files.tar"
    layers+=("$(add_blob "$layout" "$work/files.tar")")
  fi
  [ ${#layers[@]} -gt 0 ] || die "$def: the image has no packages and image_add_files added nothing"

  local env=("${IMAGE_ENV[@]}")
  printf '%s\n' "${env[@]}" | grep -q '^PATH=' || env=("PATH=$DEFAULT_PATH" "${env[@]}")
  local diff_ids=() l
  for l in "${layers[@]}"; do diff_ids+=("sha256:$l"); done
  jq -nc --argjson env "$(json_array "${env[@]}")" \
    --argjson entrypoint "$(json_array "${IMAGE_ENTRYPOINT[@]}")" \
    --argjson cmd "$(json_array "${IMAGE_CMD[@]}")" \
    --arg user "$IMAGE_USER" --arg workdir "$IMAGE_WORKDIR" \
    --argjson diff_ids "$(json_array "${diff_ids[@]}")" \
    '{architecture: "amd64", os: "linux", created: "1970-01-01T00:00:00Z",
      config: ({Env: $env, User: $user, WorkingDir: $workdir}
               + (if ($entrypoint | length) > 0 then {Entrypoint: $entrypoint} else {} end)
               + (if ($cmd | length) > 0 then {Cmd: $cmd} else {} end)),
      rootfs: {type: "layers", diff_ids: $diff_ids}}' > "$work/config.json"
  local config_digest
  config_digest=$(add_blob "$layout" "$work/config.json")
  local layer_json="[]"
  for l in "${layers[@]}"; do
    layer_json=$(jq -c --arg d "sha256:$l" --argjson s "$(stat -c %s "$layout/blobs/sha256/$l")" \
      '. + [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $d, size: $s}]' <<<"$layer_json")
  done
  jq -nc --arg cd "sha256:$config_digest" --argjson cs "$(stat -c %s "$work/config.json")" \
    --argjson layers "$layer_json" \
    '{schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $cd, size: $cs},
      layers: $layers}' > "$work/manifest.json"
  local manifest_digest full_ref="docker.io/$IMAGE_REF"
  manifest_digest=$(add_blob "$layout" "$work/manifest.json")
  jq -nc --arg md "sha256:$manifest_digest" --argjson ms "$(stat -c %s "$work/manifest.json")" \
    --arg name "$full_ref" --arg tag "${IMAGE_REF##*:}" \
    '{schemaVersion: 2, manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json",
      digest: $md, size: $ms, platform: {architecture: "amd64", os: "linux"},
      annotations: {"io.containerd.image.name": $name, "org.opencontainers.image.ref.name": $tag}}]}' \
    > "$layout/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' > "$layout/oci-layout"
  rm -rf "$work"

  local size_mb
  size_mb=$(du -smL "$layout/blobs" | cut -f1)
  if [ "$NO_IMPORT" = 1 ]; then
    log "image $IMAGE_REF: ${#layers[@]} layers, $size_mb MB, built in $((SECONDS - t0)) s (not imported)"
  elif [ "$(imported_digest "$full_ref")" = "sha256:$manifest_digest" ]; then
    log "image $IMAGE_REF: unchanged and already imported ($size_mb MB, checked in $((SECONDS - t0)) s)"
  else
    # One import per archive: `ctr images import a.tar b.tar` imports only the first, silently.
    import_layout "$layout"
    [ "$(imported_digest "$full_ref")" = "sha256:$manifest_digest" ] \
      || die "image $IMAGE_REF: import into containerd did not register digest sha256:$manifest_digest"
    log "image $IMAGE_REF: ${#layers[@]} layers, $size_mb MB, built and imported in $((SECONDS - t0)) s"
  fi
}

import_layout() {
  tar -C "$1" -cf - . | ctr_k8s images import - >/dev/null
}

ctr_k8s() { ctr --address "$BENCH_CONTAINERD_SOCK" -n k8s.io "$@"; }

imported_digest() { ctr_k8s images ls "name==$1" | awk 'NR > 1 {print $3}'; }

main() {
  NO_IMPORT=0
  local names=() n
  while [ $# -gt 0 ]; do
    case $1 in
      --no-import) NO_IMPORT=1 ;;
      -h|--help) usage ;;
      -*) echo "error: unknown option '$1'" >&2; usage ;;
      *) [ -f "$IMAGES_DIR/defs/$1.sh" ] || die "unknown image '$1'; known images: $(list_image_names | tr '\n' ' ')"
         names+=("$1") ;;
    esac
    shift
  done
  [ ${#names[@]} -gt 0 ] || mapfile -t names < <(list_image_names)
  apt_install jq
  if [ "$NO_IMPORT" = 0 ]; then
    require_root "ci/images/build.sh (it imports into containerd; --no-import only builds)"
    # Shared hold on the cluster lock (always taken before the images lock below, as up.sh does),
    # so ci/cluster/down.sh never pulls containerd away in the middle of an import.
    if [ -z "${BENCH_CLUSTER_LOCKED:-}" ]; then
      exec 7>/run/lock/bench-cluster.lock
      flock -s -w 900 7 || die "ci/cluster/up.sh or down.sh held /run/lock/bench-cluster.lock for 15 min"
    fi
    [ -S "$BENCH_CONTAINERD_SOCK" ] && ctr_k8s version >/dev/null 2>&1 \
      || die "the cluster's containerd is not running at $BENCH_CONTAINERD_SOCK: run ci/cluster/up.sh first, or pass --no-import"
  fi
  mkdir -p "$IMAGES_CACHE"
  # Two builds at once (parallel test parts) would share work folders: take turns.
  exec 9>"$IMAGES_CACHE/.lock"
  flock 9
  for n in "${names[@]}"; do (build_image "$n"); done
}

main "$@"

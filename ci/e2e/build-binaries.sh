#!/usr/bin/env bash
# Builds the Go binaries the e2e deploys besides the cluster and k6: Traefik and the k6-operator
# manager, each from the Go module proxy through go_build_tool (cached in $BENCH_CACHE/bin: a warm
# run is a stamp check); and finds the CRDs the e2e and ci/test/scenarios/routes/ apply in their Go modules.
# Usage: build-binaries.sh [traefik|k6-operator|crd-path|gateway-api-crds|traefik-version]... (default:
# both builds; traefik-version prints the Traefik release the preset pins).
# Heavy: Traefik takes about 8 min and 3 GB RSS on 2 busy cores; run one build at a time.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

# K6_OPERATOR_VERSION: the harness' pins and why, in one file.
. "$BENCH_ROOT/ci/versions.env"
# The Gateway API version and channel charts/bench/Chart.yaml pins (its annotations, the one place
# they are written; the pinned standard channel is also what the pinned Traefik's go.mod requires).
apt_install python3-yaml jq
chart_annotation() {
  python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["annotations"].get(sys.argv[2], ""))' \
    "$BENCH_ROOT/charts/bench/Chart.yaml" "$1"
}
GATEWAY_API_VERSION=$(chart_annotation bench.dev/gateway-api-version)
GATEWAY_API_CHANNEL=$(chart_annotation bench.dev/gateway-api-channel)
# Traefik: the image tag values/traefik.yaml pins (the preset users install; its comment says why),
# so the e2e, the dashboards' check and the route experiments run the binary users get.
TRAEFIK_VERSION=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["traefik"]["image"]["tag"])' \
  "$BENCH_ROOT/values/traefik.yaml") || die "cannot read traefik.image.tag from values/traefik.yaml"
[[ $TRAEFIK_VERSION =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "values/traefik.yaml: traefik.image.tag '$TRAEFIK_VERSION' is not a release tag like v3.6.0 (the e2e builds that Traefik release)"

build_traefik() {
  # Traefik's go.mod has three remote replace lines; a go.mod's replaces only apply in the main
  # module, so the throwaway module repeats them and the exclude (as in Traefik's own go.mod).
  # GO_BUILD_FLAGS is word-split; IFS=newline keeps the -ldflags value one argument. -s -w: no
  # symbol table or DWARF, a shorter link and a binary about a third smaller.
  GO_MOD_EXTRA='replace (
	github.com/abbot/go-http-auth => github.com/containous/go-http-auth v0.4.1-0.20200324110947-a37a7636d23e
	github.com/gorilla/mux => github.com/containous/mux v0.0.0-20250523120546-41b6ec3aed59
	github.com/mailgun/minheap => github.com/containous/minheap v0.0.0-20190809180810-6e71eb837595
)
exclude github.com/tencentcloud/tencentcloud-sdk-go v3.0.83+incompatible' \
  IFS=$'\n' GO_BUILD_FLAGS="-ldflags=-s -w -X=github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION" \
    go_build_tool traefik "$TRAEFIK_VERSION" github.com/traefik/traefik/v3/cmd/traefik \
      "github.com/traefik/traefik/v3/cmd/traefik@$TRAEFIK_VERSION"
}

build_k6_operator() {
  IFS=$'\n' GO_BUILD_FLAGS="-ldflags=-s -w" \
    go_build_tool k6-operator "$K6_OPERATOR_VERSION" github.com/grafana/k6-operator/cmd \
    "github.com/grafana/k6-operator/cmd@$K6_OPERATOR_VERSION"
}

# crd_path prints the TestRun CRD shipped in the k6-operator module (downloaded on demand).
k6_operator_crd_path() {
  local dir
  dir=$(go mod download -json "github.com/grafana/k6-operator@$K6_OPERATOR_VERSION" | jq -r .Dir)
  [ -f "$dir/config/crd/bases/k6.io_testruns.yaml" ] || die "k6.io_testruns.yaml not found in $dir"
  printf '%s\n' "$dir/config/crd/bases/k6.io_testruns.yaml"
}

# gateway_api_crds: the pinned channel's CRDs of the pinned Gateway API module (module zip only),
# the folder to `kubectl apply --server-side -f`.
gateway_api_crds() {
  local dir
  [ -n "$GATEWAY_API_VERSION" ] && [ -n "$GATEWAY_API_CHANNEL" ] ||
    die "no bench.dev/gateway-api-version/-channel annotation in charts/bench/Chart.yaml"
  dir=$(cd "$BENCH_CACHE" && go mod download -json "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" | jq -r .Dir)
  [ -f "$dir/config/crd/$GATEWAY_API_CHANNEL/gateway.networking.k8s.io_httproutes.yaml" ] ||
    die "Gateway API CRDs not found in sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION ($dir/config/crd/$GATEWAY_API_CHANNEL)"
  printf '%s\n' "$dir/config/crd/$GATEWAY_API_CHANNEL"
}

main() {
  local what
  [ $# -gt 0 ] || set -- traefik k6-operator
  for what in "$@"; do
    case $what in
      traefik) build_traefik ;;
      k6-operator) build_k6_operator ;;
      crd-path) k6_operator_crd_path ;;
      gateway-api-crds) gateway_api_crds ;;
      traefik-version) printf '%s\n' "$TRAEFIK_VERSION" ;;
      *) die "unknown binary '$what'; allowed: traefik, k6-operator, crd-path, gateway-api-crds, traefik-version" ;;
    esac
  done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi

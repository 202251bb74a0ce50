#!/usr/bin/env bash
# Installs the pinned chart tools into .tools/ (git-ignored): helm v3 (`helm`), helm v4 (`helm4`),
# the helm-unittest plugin (offline), kubeconform, yamllint, and local JSON schemas for kubeconform
# (Kubernetes built-ins from PyPI kubernetes-validate, plus TestRun, ServiceMonitor, PodMonitor and
# the Gateway API kinds generated from their CRDs). Binaries are built from the Go module proxy once and cached in
# $BENCH_CACHE; a warm run only checks version stamps (a second or two).
# Usage: ci/tools/install.sh [all|helm]   (prints nothing on stdout; logs on stderr)
#   helm: helm v3 alone, what installing and running the chart needs (make demo, the e2e, the
#   matrix on the local cluster): a cold demo does not wait for the chart-test tools.
. "$(dirname "$0")/../lib/common.sh"

# HELM3_VERSION, HELM4_VERSION, HELM_UNITTEST_VERSION, KUBECONFORM_VERSION, KUBERNETES_VALIDATE_VERSION,
# YAMLLINT_VERSION, PYYAML_VERSION, K6_OPERATOR_VERSION, PROMETHEUS_OPERATOR_VERSION, KUBERNETES_VERSION:
# the harness' pins and why, in one file.
. "$BENCH_ROOT/ci/versions.env"
# shellcheck source=../../lib/venv.sh
. "$BENCH_ROOT/lib/venv.sh"
# Gateway API: the version and channel charts/bench/Chart.yaml pins (its annotations, the one place
# they are written); the CRDs come from the sigs.k8s.io/gateway-api module (config/crd/<channel>/).
GATEWAY_API_VERSION=$(sed -n 's/^  bench.dev\/gateway-api-version: //p' "$BENCH_ROOT/charts/bench/Chart.yaml")
GATEWAY_API_CHANNEL=$(sed -n 's/^  bench.dev\/gateway-api-channel: //p' "$BENCH_ROOT/charts/bench/Chart.yaml")
# Kubernetes version the chart is rendered and validated for by default (helm v3 ldflags,
# kubeconform): the local cluster's minor (ci/cluster, the e2e run), patch 0 (v1.N.x gives 1.N.0).
kube_minor=${KUBERNETES_VERSION#v}
BENCH_KUBE_VERSION=${BENCH_KUBE_VERSION:-${kube_minor%.*}.0}

SCHEMA_DIR="$BENCH_TOOLS/schemas"

install_helm3() {
  local minor=${BENCH_KUBE_VERSION#1.}; minor=${minor%%.*}
  # Go-installed helm v3 defaults .Capabilities.KubeVersion to 1.20: set it like helm's Makefile does.
  # go_build_tool word-splits GO_BUILD_FLAGS; IFS=newline keeps the -ldflags value one argument.
  IFS=$'\n' GO_BUILD_FLAGS="-ldflags=-s -w -X=helm.sh/helm/v3/internal/version.version=$HELM3_VERSION -X=helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X=helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor -X=helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X=helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor" \
    go_build_tool helm "$HELM3_VERSION kube$BENCH_KUBE_VERSION" helm.sh/helm/v3/cmd/helm "helm.sh/helm/v3/cmd/helm@$HELM3_VERSION"
}

install_helm4() {
  IFS=$'\n' GO_BUILD_FLAGS="-ldflags=-s -w -X=helm.sh/helm/v4/internal/version.version=$HELM4_VERSION" \
    go_build_tool helm4 "$HELM4_VERSION" helm.sh/helm/v4/cmd/helm "helm.sh/helm/v4/cmd/helm@$HELM4_VERSION"
}

install_kubeconform() {
  IFS=$'\n' GO_BUILD_FLAGS="-ldflags=-s -w" \
    go_build_tool kubeconform "$KUBECONFORM_VERSION" github.com/yannh/kubeconform/cmd/kubeconform \
    "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"
}

# The plugin is installed from a local folder (no download): our own plugin.yaml naming the binary.
# Built against the helm v3 above (its go.mod asks v3.21.3 or newer): one set of helm and Kubernetes
# client packages for both, compiled once on a cold machine, and the unit tests render with the
# helm the other cases run (the chart's 257 unit cases give the same results either way).
install_helm_unittest() {
  GO_MOD_EXTRA="replace github.com/vmware-labs/yaml-jsonpath v0.3.2 => github.com/helm-unittest/yaml-jsonpath v0.4.0" \
  IFS=$'\n' GO_BUILD_FLAGS="-ldflags=-s -w" \
    go_build_tool untt "$HELM_UNITTEST_VERSION helm $HELM3_VERSION" github.com/helm-unittest/helm-unittest/cmd/helm-unittest \
    "github.com/helm-unittest/helm-unittest/cmd/helm-unittest@$HELM_UNITTEST_VERSION" "helm.sh/helm/v3@$HELM3_VERSION"
  local src="$BENCH_TOOLS/helm-unittest-src" plugins="$BENCH_TOOLS/helm-plugins"
  if HELM_PLUGINS="$plugins" helm plugin list 2>/dev/null | grep -q "^unittest[[:space:]]*${HELM_UNITTEST_VERSION#v}" \
    && cmp -s "$BENCH_CACHE/bin/untt" "$src/untt-linux-amd64"; then
    return 0
  fi
  rm -rf "$src" "$plugins"; mkdir -p "$src" "$plugins"
  cp "$BENCH_CACHE/bin/untt" "$src/untt-linux-amd64"
  cat > "$src/plugin.yaml" <<YAML
name: unittest
version: "${HELM_UNITTEST_VERSION#v}"
usage: unit tests for helm charts (built from source by ci/tools/install.sh)
description: helm-unittest $HELM_UNITTEST_VERSION, installed offline
ignoreFlags: false
platformCommand:
  - os: linux
    arch: amd64
    command: "\$HELM_PLUGIN_DIR/untt-linux-amd64"
YAML
  HELM_PLUGINS="$plugins" helm plugin install "$src" >/dev/null
  log "installed helm-unittest $HELM_UNITTEST_VERSION plugin into $plugins"
}

install_python_tools() {
  # the pinned venv of ci/tools/requirements-chart.txt (lib/venv.sh: --no-deps, cached per hash)
  ensure_venv chart-tools "$BENCH_ROOT/ci/tools/requirements-chart.txt"
  CHART_PYTHON=$VENV_PYTHON
  ln -sf "$(dirname "$CHART_PYTHON")/yamllint" "$BENCH_TOOLS/bin/yamllint"
}

# Go modules hold the CRDs; `go mod download` fetches the module zip only (no build).
crd_file() {
  local module=$1 path=$2 dir
  dir=$(cd "$BENCH_CACHE" && go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -f "$dir/$path" ] || die "CRD $path not found in $module"
  printf '%s/%s\n' "$dir" "$path"
}

# Schemas are generated once per version set into $BENCH_CACHE (a clean clone links them: no
# regeneration) and linked as .tools/schemas.
install_schemas() {
  [ -n "$GATEWAY_API_VERSION" ] && [ -n "$GATEWAY_API_CHANNEL" ] || die "no bench.dev/gateway-api-version/-channel annotation in charts/bench/Chart.yaml"
  local stamp="kube $BENCH_KUBE_VERSION k8s-validate $KUBERNETES_VALIDATE_VERSION k6-operator $K6_OPERATOR_VERSION prometheus-operator $PROMETHEUS_OPERATOR_VERSION gateway-api $GATEWAY_API_VERSION $GATEWAY_API_CHANNEL gen $(sha256sum "$BENCH_ROOT/ci/tools/schemas.py" | cut -c1-12)"
  local cached="$BENCH_CACHE/schemas/$(printf '%s' "$stamp" | sha256sum | cut -c1-16)"
  if [ "$(cat "$cached/.stamp" 2>/dev/null)" != "$stamp" ]; then
    local k6op="github.com/grafana/k6-operator@$K6_OPERATOR_VERSION"
    local promop="github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION"
    local gwapi="sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" gwdir="config/crd/$GATEWAY_API_CHANNEL/gateway.networking.k8s.io"
    rm -rf "$cached"; mkdir -p "$cached"
    "$CHART_PYTHON" "$BENCH_ROOT/ci/tools/schemas.py" --out "$cached" --kube-version "$BENCH_KUBE_VERSION" \
      --crd "$(crd_file "$k6op" config/crd/bases/k6.io_testruns.yaml)" \
      --crd "$(crd_file "$promop" example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml)" \
      --crd "$(crd_file "$promop" example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml)" \
      --crd "$(crd_file "$gwapi" "${gwdir}_gatewayclasses.yaml")" \
      --crd "$(crd_file "$gwapi" "${gwdir}_gateways.yaml")" \
      --crd "$(crd_file "$gwapi" "${gwdir}_httproutes.yaml")" \
      --crd "$(crd_file "$gwapi" "${gwdir}_grpcroutes.yaml")" \
      --crd "$(crd_file "$gwapi" "${gwdir}_referencegrants.yaml")" \
      --crd "$(crd_file "$gwapi" "${gwdir}_backendtlspolicies.yaml")"
    printf '%s\n' "$stamp" > "$cached/.stamp"
    log "wrote kubeconform schemas into $cached"
  fi
  [ ! -d "$SCHEMA_DIR" ] || [ -L "$SCHEMA_DIR" ] || rm -rf "$SCHEMA_DIR"
  ln -sfn "$cached" "$SCHEMA_DIR"
}

main() {
  command -v go >/dev/null || die "go is required to build the chart tools (Go toolchain on PATH)"
  mkdir -p "$BENCH_CACHE" "$BENCH_TOOLS/bin"
  # One heavy Go build at a time on this shared machine: builds run in sequence under a lock.
  exec 8>"$BENCH_CACHE/chart-tools.lock"
  flock 8
  case ${1:-all} in
    helm) install_helm3; return 0 ;;
    all) ;;
    *) die "ci/tools/install.sh: '$1' is not allowed; use all (every chart tool) or helm (helm v3 alone)" ;;
  esac
  install_helm3
  install_helm4
  install_kubeconform
  install_helm_unittest
  install_python_tools
  install_schemas
}

main "$@"

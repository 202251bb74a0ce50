#!/usr/bin/env bash
# `make demo` on a machine with kind, Docker and internet: a kind cluster, the k6 runner image built
# from scenarios/runner/Dockerfile and loaded into the node, charts/bench installed with its real subcharts
# (Traefik, kube-prometheus-stack, k6-operator; values/traefik.yaml), the dynamic scenario followed to
# its end and its tables printed. The release and the cluster stay up; --clean removes both.
#   ci/demo/kind.sh [--clean]
# Not exercised by the project's tests: the machines bench is developed on have neither Docker nor a
# registry (ci/demo/demo.sh uses the project's own cluster there).
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source=../../lib/venv.sh
. "$BENCH_ROOT/lib/venv.sh"

E2E_RELEASE=${BENCH_E2E_RELEASE:-bench}
E2E_NAMESPACE=${BENCH_E2E_NAMESPACE:-bench}
E2E_WORK=${BENCH_E2E_WORK:-$BENCH_CACHE/e2e}

KIND_CLUSTER=${BENCH_KIND_CLUSTER:-bench}
KIND_VALUES=${BENCH_KIND_VALUES:-$BENCH_ROOT/values/traefik.yaml}
RUNNER_IMAGE=bench/k6:local

require_commands() {
  local c
  for c in kind docker helm kubectl jq; do
    command -v "$c" >/dev/null || die "the kind demo needs '$c' on PATH (helm: make tools)"
  done
  docker info >/dev/null 2>&1 || die "docker does not answer ('docker info' failed): start Docker or use the local cluster (BENCH_DEMO_CLUSTER=local)"
}

ensure_kind_cluster() {
  if ! kind get clusters 2>/dev/null | grep -qx "$KIND_CLUSTER"; then
    kind create cluster --name "$KIND_CLUSTER" --wait 180s
  fi
  kubectl config use-context "kind-$KIND_CLUSTER" >/dev/null
}

load_runner_image() {
  # the same command the README's quick start gives users (make runner-image ... KIND_CLUSTER=...)
  BENCH_IMAGE_BUILDER=docker bash "$BENCH_ROOT/scenarios/runner/image.sh" "$RUNNER_IMAGE" "$KIND_CLUSTER"
}

install_release() {
  local run_id=$1
  # --wait: the TestRun hook starts once the backend, Traefik, Prometheus and the operator are ready.
  helm upgrade --install "$E2E_RELEASE" "$BENCH_ROOT/charts/bench" -n "$E2E_NAMESPACE" --create-namespace \
    --dependency-update --wait --timeout 15m -f "$KIND_VALUES" \
    --set loadtest.scenario=dynamic --set loadtest.runId="$run_id" \
    --set loadtest.runner.image.repository="${RUNNER_IMAGE%:*}",loadtest.runner.image.tag="${RUNNER_IMAGE##*:}" \
    --set loadtest.runner.image.pullPolicy=IfNotPresent
}

# follow_and_show DIR: follows the release's TestRun to its end (at most 900 s) with the e2e
# harness, its evidence in DIR, and prints its tables and where its summary is.
follow_and_show() {
  ensure_venv bench "$BENCH_ROOT/requirements.txt"
  BENCH_E2E_RELEASE=$E2E_RELEASE BENCH_E2E_NAMESPACE=$E2E_NAMESPACE PYTHONPATH="$BENCH_ROOT/ci/e2e" \
    "$VENV_PYTHON" -m e2eharness follow "$1" 900
  echo "Grafana: kubectl -n $E2E_NAMESPACE port-forward svc/$E2E_RELEASE-grafana 3000:80"
  echo "  (admin password: kubectl -n $E2E_NAMESPACE get secret $E2E_RELEASE-grafana -o jsonpath='{.data.admin-password}' | base64 -d)"
  echo "Clean up with: ci/demo/kind.sh --clean"
}

main() {
  require_commands
  case ${1:-} in
    --clean)
      helm uninstall "$E2E_RELEASE" -n "$E2E_NAMESPACE" --wait || log "release $E2E_RELEASE was not installed"
      kind delete cluster --name "$KIND_CLUSTER"
      return ;;
    "") ;;
    *) die "unknown option '$1'; allowed: --clean (or nothing)" ;;
  esac
  local run_id dir
  run_id=demo-$(date -u +%Y%m%d-%H%M%S)
  dir="$E2E_WORK/runs/$run_id"
  ensure_kind_cluster
  load_runner_image
  install_release "$run_id"
  follow_and_show "$dir"
}

main "$@"

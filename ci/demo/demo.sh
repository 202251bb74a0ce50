#!/usr/bin/env bash
# `make demo`: from nothing to a real dynamic benchmark on this machine, results printed.
#   ci/demo/demo.sh          build and start the local cluster (ci/cluster), build the images, deploy
#                            k6-operator, Prometheus and Traefik, install charts/bench with
#                            charts/bench/ci/08-local-cluster-values.yaml, run the dynamic scenario (about a minute), print the
#                            summary tables. The release and the cluster stay up for a look around.
#   ci/demo/demo.sh --clean  uninstall the release and stop the cluster (`make demo-clean`).
# Which cluster: BENCH_DEMO_CLUSTER=local (default) is the project's own cluster (offline, what the tests
# run); =kind takes kind (ci/demo/kind.sh: real subcharts, needs internet, not run by the tests);
# =auto takes kind when kind and a running Docker are there, else the local cluster.
. "$(dirname "$0")/../lib/common.sh"

E2E_T0=$(date +%s)
export E2E_T0

RELEASE=${BENCH_E2E_RELEASE:-bench}
NAMESPACE=${BENCH_E2E_NAMESPACE:-bench}

clean() {
  require_root "ci/demo/demo.sh --clean"
  . "$BENCH_ROOT/ci/cluster/config.sh"
  export KUBECONFIG=$BENCH_KUBECONFIG
  if [ -f "$BENCH_KUBECONFIG" ] && kubectl get --raw /readyz >/dev/null 2>&1; then
    if helm status "$RELEASE" -n "$NAMESPACE" >/dev/null 2>&1; then
      helm uninstall "$RELEASE" -n "$NAMESPACE" --wait
    fi
    # The chart's pre-delete hook removes its TestRun; TestRuns started by hand would stay.
    kubectl -n "$NAMESPACE" delete testruns.k6.io --all --wait=true
  fi
  bash "$BENCH_ROOT/ci/cluster/down.sh"
}

# demo_cluster: prints kind or local for BENCH_DEMO_CLUSTER (clear error on anything else).
demo_cluster() {
  local choice=${BENCH_DEMO_CLUSTER:-local}
  case $choice in
    kind|local) printf '%s\n' "$choice" ;;
    auto)
      if command -v kind >/dev/null && command -v docker >/dev/null && docker info >/dev/null 2>&1; then
        echo kind
      else
        echo local
      fi ;;
    *) die "BENCH_DEMO_CLUSTER='$choice' is not allowed; use local, kind or auto" ;;
  esac
}

CLUSTER=$(demo_cluster)
if [ "$CLUSTER" = kind ]; then
  log "demo on kind (BENCH_DEMO_CLUSTER=${BENCH_DEMO_CLUSTER:-}; =local for the project's own cluster)"
  exec bash "$BENCH_ROOT/ci/demo/kind.sh" "$@"
fi

case ${1:-} in
  --clean) clean ;;
  "")
    # the e2e harness (ci/e2e/e2eharness) in the project's venv: it reads Prometheus with the report's client
    . "$BENCH_ROOT/lib/venv.sh"
    ensure_venv bench "$BENCH_ROOT/requirements.txt"
    PYTHONPATH="$BENCH_ROOT/ci/e2e:$BENCH_ROOT/dashboards/report" "$VENV_PYTHON" -m e2eharness run --keep
    . "$BENCH_ROOT/ci/cluster/env.sh"
    prom_ip=$(kubectl -n bench-monitoring get service prometheus -o jsonpath='{.spec.clusterIP}')
    echo
    echo "The release is still installed. Look around with:"
    echo "  export KUBECONFIG=$KUBECONFIG PATH=$BENCH_TOOLS/bin:\$PATH"
    echo "  kubectl -n $NAMESPACE get testruns,pods    # the run and its backend"
    echo "  curl -s 'http://$prom_ip:9090/api/v1/query?query=k6_http_reqs_total'"
    echo "Clean up with: make demo-clean"
    ;;
  *) die "unknown option '$1'; allowed: --clean (or nothing)" ;;
esac

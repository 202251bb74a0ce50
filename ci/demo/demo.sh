#!/usr/bin/env bash
# `make demo`: from nothing to a real dynamic benchmark on this machine, results printed.
#   ci/demo/demo.sh          build and start the local cluster (ci/cluster), build the images, deploy
#                            k6-operator, Prometheus and Traefik, install charts/bench with
#                            values/local.yaml, run the dynamic scenario (about a minute), print the
#                            summary tables. The release and the cluster stay up for a look around.
#   ci/demo/demo.sh --clean  uninstall the release and stop the cluster (`make demo-clean`).
# Offline: there is no Docker or registry here, so the demo always uses the project's own cluster;
# with internet, `helm install bench ./charts/bench --dependency-update -f values/traefik.yaml` on
# kind is the path (see the top README).
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
    # The TestRun is a Helm hook: uninstall leaves it (and its runner pods) behind.
    kubectl -n "$NAMESPACE" delete testruns.k6.io --all --wait=true
  fi
  bash "$BENCH_ROOT/ci/cluster/down.sh"
}

case ${1:-} in
  --clean) clean ;;
  "")
    if command -v kind >/dev/null && command -v docker >/dev/null; then
      log "kind and docker found, but the demo runs offline on the project's own cluster (ci/cluster)"
    fi
    bash "$BENCH_ROOT/ci/e2e/run.sh" --keep
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

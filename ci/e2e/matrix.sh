#!/usr/bin/env bash
# The matrix runner (dashboards/report/matrix.sh) on the project's local cluster (make cluster-up),
# which has no registry and no internet: the e2e stand-ins (k6-operator, Prometheus, Traefik from
# its preset) deployed if missing, the e2e release and namespace and the stand-in Prometheus as
# defaults, and each variant installed by ci/e2e/install-variant.sh (an offline copy of the chart
# over charts/bench/ci/08-local-cluster-values.yaml). Takes matrix.sh's options; given ones win.
# Usage: ci/e2e/matrix.sh --out DIR [matrix.sh options...] NAME:SPEC...   (make matrix LOCAL=1)
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
. "$BENCH_ROOT/ci/e2e/lib.sh"

main() {
  export KUBECONFIG=${KUBECONFIG:-$BENCH_KUBECONFIG}
  bash "$BENCH_ROOT/ci/tools/install.sh" helm >&2   # the pinned helm, into .tools/bin
  kubectl get --raw /readyz >/dev/null 2>&1 || die "the local cluster does not answer at $KUBECONFIG; start it with make cluster-up"
  deploy_stack   # sets PROM_URL to the stand-in Prometheus
  exec bash "$BENCH_ROOT/dashboards/report/matrix.sh" --release "$E2E_RELEASE" --namespace "$E2E_NAMESPACE" \
    --prometheus "$PROM_URL" --installer "$E2E_DIR/install-variant.sh" "$@"
}

main "$@"

#!/usr/bin/env bash
# The matrix runner's installer on the local cluster (dashboards/report/matrix.sh --installer):
# one variant into RELEASE/NAMESPACE from an offline copy of the chart over the local cluster's
# values (install_chart in lib.sh), with the run id RUN_ID and the preset and variant arguments.
# Usage: ci/e2e/install-variant.sh RELEASE NAMESPACE RUN_ID [HELM_ARGS...]
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source=lib.sh
. "$BENCH_ROOT/ci/e2e/lib.sh"

[ $# -ge 3 ] || die "usage: ci/e2e/install-variant.sh RELEASE NAMESPACE RUN_ID [HELM_ARGS...]"
E2E_RELEASE=$1 E2E_NAMESPACE=$2
shift 2
install_chart "$@" --create-namespace

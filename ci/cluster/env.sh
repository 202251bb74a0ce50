# Source after ci/cluster/up.sh:  . ci/cluster/env.sh
# Exports KUBECONFIG (the cluster's admin kubeconfig) and puts the built kubectl (.tools/bin) on PATH.
# Changes nothing else in the calling shell (no `set -e`).
# shellcheck shell=bash
BENCH_ROOT=${BENCH_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
. "$BENCH_ROOT/ci/cluster/config.sh"
export KUBECONFIG=$BENCH_KUBECONFIG
case ":$PATH:" in
  *":${BENCH_TOOLS:-$BENCH_ROOT/.tools}/bin:"*) ;;
  *) export PATH="${BENCH_TOOLS:-$BENCH_ROOT/.tools}/bin:$PATH" ;;
esac

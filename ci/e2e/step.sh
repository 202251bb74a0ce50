#!/usr/bin/env bash
# One step of the e2e harness on a cluster ci/e2e/run.sh has set up, for the fixtures of the e2e
# test part (ci/test/e2e/conftest.py), which judge what the steps leave behind.
#   ci/e2e/step.sh env                       JSON: KUBECONFIG, PATH, Prometheus URL, folders, names
#   ci/e2e/step.sh install TESTID HELM_ARGS... installs or upgrades the release for run id TESTID
#   ci/e2e/step.sh follow DIR TIMEOUT_S [NAME] follows the TestRun NAME (default: the release's) to
#                                            its end, evidence added to DIR (as run.sh keeps it); prints NAME
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/ci/e2e/lib.sh"
# shellcheck source=../cluster/env.sh
. "$BENCH_ROOT/ci/cluster/env.sh"

step=${1:-}
[ $# -gt 0 ] && shift
case $step in
  env)
    ensure_report_venv
    prometheus_url
    jq -n --arg kubeconfig "$KUBECONFIG" --arg path "$PATH" --arg prometheus "$PROM_URL" \
      --arg work "$E2E_WORK" --arg namespace "$E2E_NAMESPACE" --arg release "$E2E_RELEASE" \
      --arg values "$E2E_VALUES" --arg traefik_metrics_port "$TRAEFIK_METRICS_PORT" \
      --arg report_python "$REPORT_PYTHON" \
      '{KUBECONFIG: $kubeconfig, PATH: $path, prometheus: $prometheus, work: $work,
        namespace: $namespace, release: $release, values: $values,
        traefik_metrics_port: $traefik_metrics_port, report_python: $report_python}' ;;
  install)
    [ $# -ge 1 ] || die "usage: ci/e2e/step.sh install TESTID [HELM_ARGS...]"
    install_chart "$@" ;;
  follow)
    [ $# -ge 2 ] || die "usage: ci/e2e/step.sh follow DIR TIMEOUT_S [NAME]"
    name=${3:-$(testrun_name)}
    follow_testrun "$name" "$1" "$2" || die "TestRun $name did not finish within $2 s; evidence in $1"
    printf '%s\n' "$name" ;;
  *) die "usage: ci/e2e/step.sh env|install|follow ARGS... (unknown step '$step')" ;;
esac

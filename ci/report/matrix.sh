#!/usr/bin/env bash
# Matrix runner: runs the same scenario once per variant (a routing path or a controller), one after
# the other on one local cluster, one `helm upgrade` per variant, with a fresh backend and a
# cool-down between runs, then writes the comparison report (ci/report/report.sh).
#
# Usage: ci/report/matrix.sh --out DIR [--values FILE] [--cooldown SECONDS] [--timeout SECONDS]
#                            [--budget KEY=VALUE ...] NAME:SPEC NAME:SPEC...
#   SPEC is a comma-separated list; each item is a values file (*.yaml, passed as -f) or KEY=VALUE
#   (passed as --set-string ... for strings, --set for numbers and booleans).
# Examples (cluster from `make cluster-up`, stack from ci/e2e):
#   ci/report/matrix.sh --out out/paths clusterip:loadtest.target=clusterip pod:loadtest.target=pod
#   ci/report/matrix.sh --out out/ctl traefik:values/traefik.yaml ingress-nginx:values/ingress-nginx.yaml
# Needs: the local cluster up (ci/cluster), the e2e stack (k6-operator, Prometheus, Traefik; deployed
# here through ci/e2e/lib.sh if missing), helm and kubectl on PATH (.tools/bin).
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/ci/e2e/lib.sh"

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }

# parse_variant SPEC: prints helm arguments, one per line, for a variant's SPEC (clear error if bad).
parse_variant() {
  local spec=$1 item key value
  local -a items
  IFS=',' read -r -a items <<<"$spec"
  [ ${#items[@]} -gt 0 ] || die "variant spec '$spec' is empty; expected values files and/or KEY=VALUE items"
  for item in "${items[@]}"; do
    case $item in
      *.yaml|*.yml)
        [ -f "$item" ] || die "values file '$item' (variant spec '$spec') does not exist"
        printf '%s\n' -f "$item" ;;
      *=*)
        key=${item%%=*} value=${item#*=}
        [[ $key =~ ^[A-Za-z0-9_.-]+$ ]] || die "key '$key' in variant spec '$spec' is not a values path like loadtest.target"
        [ "$key" != loadtest.runId ] || die "variant spec '$spec' sets loadtest.runId; the matrix runner sets it per run"
        if [[ $value =~ ^(true|false|[0-9]+)$ ]]; then printf '%s\n' --set "$key=$value"
        else printf '%s\n' --set-string "$key=$value"; fi ;;
      *) die "item '$item' in variant spec '$spec' is neither a values file (*.yaml) nor KEY=VALUE" ;;
    esac
  done
}

# refresh_backend: restarts the backend Deployment of the release (new pods, no connection or
# cache state carried over from the previous variant) and waits until every pod is ready.
refresh_backend() {
  local deploy="$E2E_RELEASE-backend"
  kubectl -n "$E2E_NAMESPACE" get deployment "$deploy" >/dev/null 2>&1 || return 0
  log "fresh backend: rollout restart of $E2E_NAMESPACE/$deploy"
  kubectl -n "$E2E_NAMESPACE" rollout restart "deployment/$deploy" >/dev/null
  wait_rollout "$E2E_NAMESPACE" "$deploy"
}

# run_variant NAME TESTID DIR HELM_ARGS...: one helm upgrade (install_chart of ci/e2e/lib.sh, with
# the --values file), follows the TestRun, writes DIR/summary.json from the runner log. Fails with
# the TestRun stages and the helm output when it cannot.
run_variant() {
  local name=$1 testid=$2 dir=$3 run log; shift 3
  rm -rf "$dir"; mkdir -p "$dir"
  # The hook TestRun of the previous variant must not be the one followed.
  kubectl -n "$E2E_NAMESPACE" delete testruns.k6.io --all --wait=true >/dev/null
  log "variant $name: helm upgrade (runId $testid)"
  install_chart "$testid" --set loadtest.parallelism=1 "$@" 2> "$dir/helm.log" \
    || die "variant $name: helm upgrade failed: $(tail -n 20 "$dir/helm.log")"
  run=$(testrun_name)
  follow_testrun "$run" "$dir/testrun" "$MATRIX_TIMEOUT" || die "variant $name: TestRun $run did not end in $MATRIX_TIMEOUT s"
  log=$(grep -l BENCH_SUMMARY_JSON_BEGIN "$dir"/testrun/*.log 2>/dev/null | head -n 1) \
    || die "variant $name: no runner log with a summary in $dir/testrun (stages: $(paste -sd' ' "$dir/testrun/stage"))"
  extract_summary "$log" "$dir/summary.json" || die "variant $name: the summary in $log is not bench.summary/v1 JSON"
  log "variant $name: summary in $dir/summary.json"
}

main() {
  local out="" cooldown=30 stamp name spec i=0
  local -a budgets=() variants=() helm_args
  MATRIX_TIMEOUT=900
  while [ $# -gt 0 ]; do
    case $1 in
      --out) out=${2:?--out needs a folder}; shift 2 ;;
      --values) E2E_VALUES=${2:?--values needs a file}; shift 2 ;;
      --cooldown) cooldown=${2:?--cooldown needs seconds}; shift 2 ;;
      --timeout) MATRIX_TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
      --budget) budgets+=(--budget "${2:?--budget needs KEY=VALUE}"); shift 2 ;;
      -h|--help) usage; return 0 ;;
      -*) die "unknown option '$1'; allowed: --out, --values, --cooldown, --timeout, --budget, --help" ;;
      *) variants+=("$1"); shift ;;
    esac
  done
  [ -n "$out" ] || die "--out DIR is required (where the summaries and the report go)"
  [ ${#variants[@]} -ge 2 ] || die "give at least two variants NAME:SPEC to compare (got ${#variants[@]})"
  [[ $cooldown =~ ^[0-9]+$ ]] || die "--cooldown '$cooldown' is not a whole number of seconds"
  [[ $MATRIX_TIMEOUT =~ ^[0-9]+$ ]] || die "--timeout '$MATRIX_TIMEOUT' is not a whole number of seconds"
  [ -f "$E2E_VALUES" ] || die "--values '$E2E_VALUES' does not exist (default: values/local.yaml)"
  for spec in "${variants[@]}"; do
    [[ $spec =~ ^[a-z0-9][a-z0-9-]*:.+ ]] || die "variant '$spec' is not NAME:SPEC with NAME of a-z, 0-9 and -"
    parse_variant "${spec#*:}" > /dev/null
  done

  bash "$BENCH_ROOT/ci/tools/install.sh" >&2   # helm
  if [ -f "$BENCH_ROOT/ci/cluster/env.sh" ]; then
    # shellcheck source=../cluster/env.sh
    . "$BENCH_ROOT/ci/cluster/env.sh"
  fi
  export KUBECONFIG=${KUBECONFIG:-$BENCH_KUBECONFIG}
  kubectl get --raw /readyz >/dev/null 2>&1 || die "no cluster answers at $KUBECONFIG; start it with make cluster-up (or ci/e2e/run.sh --keep)"
  deploy_stack
  stamp=$(date -u +%Y%m%d-%H%M%S)
  mkdir -p "$out"
  local -a summaries=()
  for spec in "${variants[@]}"; do
    name=${spec%%:*}
    i=$((i + 1))
    if [ $i -gt 1 ]; then log "cool-down $cooldown s"; sleep "$cooldown"; fi
    refresh_backend
    mapfile -t helm_args < <(parse_variant "${spec#*:}")
    run_variant "$name" "matrix-$stamp-$name" "$out/$name" "${helm_args[@]}"
    summaries+=("$out/$name/summary.json")
  done
  bash "$BENCH_ROOT/ci/report/report.sh" --out "$out/report" --prometheus "$PROM_URL" "${budgets[@]}" "${summaries[@]}"
}

main "$@"

#!/usr/bin/env bash
# Matrix runner: runs the same experiment once per variant (a routing path, a controller, a setting),
# one after the other on one cluster, one `helm upgrade --install` per variant with its own run id,
# a fresh backend and a cool-down between runs; merges each run from Prometheus with the results
# command (every runner, benchreport results) and writes the comparison report.
#
# Usage: dashboards/report/matrix.sh --out DIR [--kubeconfig FILE] [--namespace NS] [--release NAME]
#          [-f PRESET ...] [--chart DIR] [--prometheus URL] [--cooldown S] [--timeout S]
#          [--repeats N] [--budget KEY=VALUE ...] [--allow-partial] [--installer PROGRAM] NAME:SPEC NAME:SPEC...
#   SPEC is a comma-separated list; each item is a values file (*.yaml, passed as -f) or KEY=VALUE
#   (--set-string for strings, --set for numbers and booleans). -f presets apply to every variant.
#   Without --prometheus it port-forwards to the release's kube-prometheus-stack Prometheus.
#   --repeats N (1 to 20, default 1): every variant N times, in rounds (A B, A B, ...) so drift hits
#   every variant alike; each run its own run id, one series per variant. The report then gives each
#   figure as a median with a 95 % interval across repeats and says which differences are real.
#   A variant with loadtest.target=pod (the same experiment direct to the backend pods) is the
#   control: the report gives every other run's added latency per percentile (report.sh --direct;
#   with repeats, its first repeat).
# Examples (a cluster you may load test, the release installed once with its presets):
#   dashboards/report/matrix.sh --out out/paths --kubeconfig ~/.kube/config --namespace bench --release bench \
#     -f values/traefik.yaml clusterip:loadtest.target=clusterip pod:loadtest.target=pod
#   dashboards/report/matrix.sh --out out/ctl -f values/static.yaml traefik:values/traefik.yaml nginx:values/ingress-nginx.yaml
# --installer PROGRAM: installs each variant instead of `helm upgrade --install`, run as
#   PROGRAM RELEASE NAMESPACE RUN_ID HELM_ARGS... (the -f presets, then the variant's arguments); it
#   must install RELEASE with loadtest.runId=RUN_ID and wait for it. For a cluster that needs more
#   than helm, e.g. the project's local cluster (make matrix LOCAL=1 runs ci/e2e/matrix, which
#   passes its own installer).
. "$(dirname "$0")/../../lib/common.sh"

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; }

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
# cache state carried over from the previous variant) and waits until every pod is ready. Not
# backend-failover's flapping Deployment (label bench/flapping), which a backend-failover variant
# before leaves until the next helm upgrade removes it.
refresh_backend() {
  local deploy
  deploy=$(kubectl -n "$NAMESPACE" get deployments -o name \
    -l "app.kubernetes.io/instance=$RELEASE,app.kubernetes.io/component=backend,!bench/flapping" 2>/dev/null) || return 0
  [ -n "$deploy" ] || return 0
  log "fresh backend: rollout restart of $NAMESPACE/$deploy"
  kubectl -n "$NAMESPACE" rollout restart "$deploy" >/dev/null
  kubectl -n "$NAMESPACE" rollout status "$deploy" --timeout=300s >&2 || die "backend $deploy not ready after its restart"
}

# install_variant TESTID HELM_ARGS...: one helm upgrade --install with the run id.
install_variant() {
  local testid=$1; shift
  if [ -n "$INSTALLER" ]; then
    "$INSTALLER" "$RELEASE" "$NAMESPACE" "$testid" "${PRESET_ARGS[@]}" "$@" >&2
  else
    helm upgrade --install "$RELEASE" "$CHART" -n "$NAMESPACE" --create-namespace "${PRESET_ARGS[@]}" "$@" \
      --set-string "loadtest.runId=$testid" --wait --timeout 10m >&2
  fi
}

# wait_testrun TESTID DIR: saves the run's TestRun (DIR/testrun.json: what ran, for the record)
# and waits until it is finished, failed, or deleted by `cleanup: post` after it started.
wait_testrun() {
  local testid=$1 dir=$2 start=$SECONDS stage="" name="" seen_start=false
  while [ $((SECONDS - start)) -lt "$MATRIX_TIMEOUT" ]; do
    if [ -z "$name" ]; then
      name=$(kubectl -n "$NAMESPACE" get testruns.k6.io -l "bench/testid=$testid" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null) || name=""
      [ -z "$name" ] || kubectl -n "$NAMESPACE" get testruns.k6.io "$name" -o json > "$dir/testrun.json"
    else
      if stage=$(kubectl -n "$NAMESPACE" get testruns.k6.io "$name" -o jsonpath='{.status.stage}' 2>"$dir/get.err"); then
        [ "$stage" = "$(tail -n 1 "$dir/stages" 2>/dev/null)" ] || printf '%s\n' "$stage" >> "$dir/stages"
        case $stage in started|stopped|finished|error) seen_start=true ;; esac
        case $stage in finished|error) save_runner_logs "$name" "$dir"; return 0 ;; esac
      elif grep -q NotFound "$dir/get.err"; then
        [ "$seen_start" = true ] && return 0
        die "TestRun $name (run $testid) was deleted before it started (stages: $(paste -sd' ' "$dir/stages" 2>/dev/null))"
      else
        die "cannot read TestRun $name: $(cat "$dir/get.err")"
      fi
    fi
    sleep 2
  done
  die "run $testid: TestRun ${name:-(none with label bench/testid=$testid)} did not end within $MATRIX_TIMEOUT s (stages: $(paste -sd' ' "$dir/stages" 2>/dev/null))"
}

# save_runner_logs TESTRUN DIR: keeps the runners' logs (their own tables) while the pods exist.
save_runner_logs() {
  kubectl -n "$NAMESPACE" logs -l "k6_cr=$1,runner=true" --tail=-1 --prefix --max-log-requests 100 \
    > "$2/runners.log" 2>&1 || log "runner logs of $1 not kept: $(tail -n 1 "$2/runners.log")"
}

# start_port_forward: PROM_URL through kubectl port-forward to the release's kube-prometheus-stack
# Prometheus Service (labels app=kube-prometheus-stack-prometheus, release=RELEASE).
start_port_forward() {
  local svc port
  svc=$(kubectl -n "$NAMESPACE" get services -l "app=kube-prometheus-stack-prometheus,release=$RELEASE" \
    -o jsonpath='{.items[0].metadata.name}' 2>/dev/null) || svc=""
  [ -n "$svc" ] || die "no kube-prometheus-stack Prometheus Service of release $RELEASE in namespace $NAMESPACE; give --prometheus URL"
  port=$(free_port)
  kubectl -n "$NAMESPACE" port-forward "service/$svc" "$port:9090" > "$OUT/port-forward.log" 2>&1 &
  PORT_FORWARD_PID=$!
  PROM_URL="http://127.0.0.1:$port"
  local deadline=$((SECONDS + 30))
  until curl -fsS -o /dev/null "$PROM_URL/-/ready" 2>/dev/null; do
    kill -0 "$PORT_FORWARD_PID" 2>/dev/null || die "kubectl port-forward to $svc ended: $(cat "$OUT/port-forward.log")"
    [ "$SECONDS" -lt "$deadline" ] || die "Prometheus behind $svc not ready at $PROM_URL within 30 s"
    sleep 0.5
  done
  log "Prometheus: $PROM_URL (port-forward to $NAMESPACE/$svc)"
}

stop_port_forward() {
  [ -z "${PORT_FORWARD_PID:-}" ] || kill "$PORT_FORWARD_PID" 2>/dev/null || true  # already gone: nothing to stop
}

# run_variant NAME TESTID DIR SERIES_ARGS HELM_ARGS...: install, wait for the TestRun, merge every
# runner (SERIES_ARGS: "" or "--series ID --repeat N" for results).
run_variant() {
  local name=$1 testid=$2 dir=$3 series_args=$4; shift 4
  local -a series=()
  read -r -a series <<<"$series_args"
  rm -rf "$dir"; mkdir -p "$dir"
  log "variant $name: helm upgrade --install $RELEASE (run id $testid)"
  install_variant "$testid" "$@" 2> "$dir/helm.log" || die "variant $name: helm upgrade failed: $(tail -n 20 "$dir/helm.log")"
  wait_testrun "$testid" "$dir"
  [ -s "$dir/testrun.json" ] || die "variant $name: no TestRun with label bench/testid=$testid appeared"
  log "variant $name: merging every runner of $testid from $PROM_URL"
  local status=0
  bash "$BENCH_ROOT/dashboards/report/report.sh" results --testid "$testid" --prometheus "$PROM_URL" --out "$dir" \
    --wait-settled 60 --release "$RELEASE" --namespace "$NAMESPACE" "${series[@]}" "${BUDGETS[@]}" "${PARTIAL[@]}" \
    > "$dir/results.log" 2>&1 || status=$?
  # 3: merged and written, but Prometheus lacks part of the run (results names the runners and spans)
  [ "$status" -ne 3 ] || die "variant $name: run $testid is incomplete (--allow-partial accepts it): $(grep -E '^(INCOMPLETE|error):' "$dir/results.log")"
  [ "$status" -eq 0 ] || die "variant $name: results failed: $(tail -n 20 "$dir/results.log")"
  log "variant $name: $(head -n 1 "$dir/results.log")"
}

main() {
  local cooldown=30 kubeconfig="" stamp name spec i=0 repeats=1 r dir series_args testid
  local -a direct=()
  local -a variants=() helm_args presets=()
  OUT="" NAMESPACE=bench RELEASE=bench CHART="$BENCH_ROOT/charts/bench" PROM_URL="" MATRIX_TIMEOUT=900 INSTALLER=""
  BUDGETS=() PARTIAL=()
  while [ $# -gt 0 ]; do
    case $1 in
      --out) OUT=${2:?--out needs a folder}; shift 2 ;;
      --kubeconfig) kubeconfig=${2:?--kubeconfig needs a file}; shift 2 ;;
      --namespace|-n) NAMESPACE=${2:?--namespace needs a name}; shift 2 ;;
      --release) RELEASE=${2:?--release needs a name}; shift 2 ;;
      --chart) CHART=${2:?--chart needs a folder}; shift 2 ;;
      -f|--values) presets+=("${2:?$1 needs a values file}"); shift 2 ;;
      --prometheus) PROM_URL=${2:?--prometheus needs a URL}; shift 2 ;;
      --cooldown) cooldown=${2:?--cooldown needs seconds}; shift 2 ;;
      --timeout) MATRIX_TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
      --budget) BUDGETS+=(--budget "${2:?--budget needs KEY=VALUE}"); shift 2 ;;
      --allow-partial) PARTIAL=(--allow-partial); shift ;;
      --repeats) repeats=${2:?--repeats needs a number}; shift 2 ;;
      --installer) INSTALLER=${2:?--installer needs a program}; shift 2 ;;
      -h|--help) usage; return 0 ;;
      -*) die "unknown option '$1'; allowed: --out, --kubeconfig, --namespace, --release, --chart, -f/--values, --prometheus, --cooldown, --timeout, --repeats, --budget, --allow-partial, --installer, --help" ;;
      *) variants+=("$1"); shift ;;
    esac
  done
  [ -n "$OUT" ] || die "--out DIR is required (where the summaries and the report go)"
  [ ${#variants[@]} -ge 1 ] || die "give at least one variant NAME:SPEC (two or more are compared)"
  [[ $cooldown =~ ^[0-9]+$ ]] || die "--cooldown '$cooldown' is not a whole number of seconds"
  [[ $MATRIX_TIMEOUT =~ ^[0-9]+$ ]] || die "--timeout '$MATRIX_TIMEOUT' is not a whole number of seconds"
  [[ $repeats =~ ^[0-9]+$ ]] && [ "$repeats" -ge 1 ] && [ "$repeats" -le 20 ] \
    || die "--repeats '$repeats' is not a whole number from 1 to 20 (runs per variant)"
  [[ $RELEASE =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || die "--release '$RELEASE' is not a Helm release name (lowercase letters, digits, '-')"
  [[ $NAMESPACE =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || die "--namespace '$NAMESPACE' is not a namespace name (lowercase letters, digits, '-')"
  [ -z "$INSTALLER" ] || [ -x "$INSTALLER" ] || die "--installer '$INSTALLER' is not an executable file"
  local p
  for p in "${presets[@]}"; do [ -f "$p" ] || die "values file '$p' (-f) does not exist"; done
  for spec in "${variants[@]}"; do
    [[ $spec =~ ^[a-z0-9][a-z0-9-]*:.+ ]] || die "variant '$spec' is not NAME:SPEC with NAME of a-z, 0-9 and -"
    parse_variant "${spec#*:}" > /dev/null
  done
  if [ -n "$kubeconfig" ]; then
    [ -f "$kubeconfig" ] || die "--kubeconfig '$kubeconfig' does not exist"
    export KUBECONFIG=$kubeconfig
  fi

  PRESET_ARGS=()
  for p in "${presets[@]}"; do PRESET_ARGS+=(-f "$p"); done
  command -v helm >/dev/null || die "helm not found on PATH (helm 3.8 or newer; make tools builds the pinned one into .tools/bin)"
  command -v kubectl >/dev/null || die "kubectl not found on PATH"
  kubectl get --raw /readyz >/dev/null 2>&1 || die "no cluster answers at ${KUBECONFIG:-the default kubeconfig}"
  mkdir -p "$OUT"
  trap stop_port_forward EXIT
  [ -n "$PROM_URL" ] || start_port_forward
  stamp=$(date -u +%Y%m%d-%H%M%S)
  local -a summaries=()
  for r in $(seq 1 "$repeats"); do
    for spec in "${variants[@]}"; do
      name=${spec%%:*}
      i=$((i + 1))
      if [ $i -gt 1 ]; then log "cool-down $cooldown s"; sleep "$cooldown"; fi
      refresh_backend
      mapfile -t helm_args < <(parse_variant "${spec#*:}")
      if [ "$repeats" -eq 1 ]; then
        testid="matrix-$stamp-$name" dir="$OUT/$name" series_args=""
      else
        testid="matrix-$stamp-$name-r$r" dir="$OUT/$name/r$r" series_args="--series matrix-$stamp-$name --repeat $r"
        log "repeat $r of $repeats"
      fi
      run_variant "$name" "$testid" "$dir" "$series_args" "${helm_args[@]}"
      summaries+=("$dir/summary.json")
      if [ ${#direct[@]} -eq 0 ] && [[ ,${spec#*:}, == *,loadtest.target=pod,* ]]; then direct=(--direct "$testid"); fi
    done
  done
  bash "$BENCH_ROOT/dashboards/report/report.sh" --out "$OUT/report" --prometheus "$PROM_URL" "${direct[@]}" \
    "${BUDGETS[@]}" "${PARTIAL[@]}" "${summaries[@]}"
}

main "$@"

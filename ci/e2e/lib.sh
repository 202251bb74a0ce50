# Functions of the end-to-end harness (sourced by ci/e2e/run.sh after ci/lib/common.sh).
# They stand up what the offline e2e needs around the chart (CRDs, k6-operator manager,
# Prometheus, Traefik), install charts/bench, follow a TestRun and read its results.
# shellcheck shell=bash

E2E_DIR="$BENCH_ROOT/ci/e2e"
# Release and namespace of the chart under test (scenarios/interfaces.md names use release `bench`).
E2E_RELEASE=${BENCH_E2E_RELEASE:-bench}
E2E_NAMESPACE=${BENCH_E2E_NAMESPACE:-bench}
# Where one run keeps its evidence (logs, watches, summary); printed at the end.
E2E_WORK=${BENCH_E2E_WORK:-$BENCH_CACHE/e2e}
E2E_VALUES=${BENCH_E2E_VALUES:-$BENCH_ROOT/charts/bench/ci/08-local-cluster-values.yaml}

# shellcheck source=../cluster/config.sh
. "$BENCH_ROOT/ci/cluster/config.sh"
# the report's venv and its Prometheus client (prom_cli), the harness' one client
# shellcheck source=../../dashboards/report/venv.sh
. "$BENCH_ROOT/dashboards/report/venv.sh"
# The e2e Traefik takes its arguments and metrics port from the preset users install
# (ci/e2e/traefik-preset.py fills the manifests' BENCH_TRAEFIK_* placeholders from it).
TRAEFIK_PRESET=$BENCH_ROOT/values/traefik.yaml
TRAEFIK_METRICS_PORT=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["traefik"]["ports"]["metrics"]["port"])' "$TRAEFIK_PRESET")
# Prometheus as the host sees it (its Service's ClusterIP); set by prometheus_url after deploy_stack.
PROM_URL=${PROM_URL:-}

# --- timing: every phase is logged with its duration (the README's cold/warm breakdown) ---------
E2E_T0=${E2E_T0:-$(date +%s)}
E2E_TIMINGS=()
# timed NAME CMD...: runs CMD and records how long it took.
timed() {
  local name=$1 t0=$SECONDS; shift
  "$@"
  E2E_TIMINGS+=("$name=$((SECONDS - t0))s")
  log "phase $name: $((SECONDS - t0)) s"
}

# --- manifests -----------------------------------------------------------------------------------
# render_manifest FILE: prints FILE with the BENCH_* placeholders replaced by this cluster's values
# (the k6-operator version: ci/versions.env, which config.sh sources).
render_manifest() {
  sed -e "s/BENCH_NAMESPACE/$E2E_NAMESPACE/g" \
      -e "s/BENCH_K6_OPERATOR_VERSION/$K6_OPERATOR_VERSION/g" \
      -e "s/BENCH_GATEWAY_IP/$BENCH_GATEWAY_IP/g" \
      -e "s/BENCH_KUBELET_PORT/$BENCH_KUBELET_PORT/g" \
      -e "s/BENCH_NODE_NAME/$BENCH_NODE_NAME/g" "$1"
}

# wait_rollout NAMESPACE DEPLOYMENT: waits until the Deployment's pods are ready (clear error if not:
# the pods described and the node's taints, which a scheduling event counts but does not name).
wait_rollout() {
  local taints
  kubectl -n "$1" rollout status "deployment/$2" --timeout=180s >&2 && return 0
  kubectl -n "$1" describe pods >&2
  taints=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}: {range .spec.taints[*]}{.key}={.effect} {end}{"\n"}{end}' 2>&1)
  die "deployment $1/$2 did not become ready in 180 s (pods described above; node taints: ${taints:-none}; \
disk-pressure means the node's filesystem is nearly full: df /var/lib)"
}

# wait_crd_established NAME: waits up to 60 s (right after apply the CRD has no status yet, which
# `kubectl wait` reports as an error instead of waiting).
wait_crd_established() {
  local _
  for _ in $(seq 60); do
    kubectl get crd "$1" -o json |
      jq -e 'any(.status.conditions[]?; .type == "Established" and .status == "True")' >/dev/null && return 0
    sleep 1
  done
  die "CRD $1 not Established after 60 s"
}

# deploy_stack: namespace of the release, k6-operator CRDs + manager, Gateway API CRDs, Prometheus,
# Traefik (Ingress and Gateway providers, GatewayClass traefik).
deploy_stack() {
  local crd_dir
  kubectl create namespace "$E2E_NAMESPACE" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  crd_dir=$(dirname "$(bash "$E2E_DIR/build-binaries.sh" crd-path)")
  # The testruns CRD is 281 KB: client-side apply would exceed the annotation size limit.
  kubectl apply --server-side --force-conflicts -f "$crd_dir/k6.io_testruns.yaml" \
    -f "$crd_dir/k6.io_privateloadzones.yaml" >/dev/null
  wait_crd_established testruns.k6.io
  wait_crd_established privateloadzones.k6.io
  # Gateway API (the chart's pin, from the sigs.k8s.io/gateway-api module): Traefik's Gateway
  # provider waits for an informer on each kind, and the manifest's GatewayClass needs its CRD.
  local gateway_crds crd
  gateway_crds=$(bash "$E2E_DIR/build-binaries.sh" gateway-api-crds)
  kubectl apply --server-side --force-conflicts -f "$gateway_crds" >/dev/null
  for crd in "$gateway_crds"/*.yaml; do
    crd=${crd##*/gateway.networking.k8s.io_}
    wait_crd_established "${crd%.yaml}.gateway.networking.k8s.io"
  done
  local m
  for m in k6-operator prometheus traefik; do
    render_manifest "$E2E_DIR/manifests/$m.yaml" | python3 "$E2E_DIR/traefik-preset.py" "$TRAEFIK_PRESET" - |
      kubectl apply -f - >/dev/null
  done
  wait_rollout k6-operator-system k6-operator-controller-manager
  wait_rollout bench-monitoring prometheus
  wait_rollout bench-traefik traefik
  prometheus_url
}

# prometheus_url: sets PROM_URL to the e2e Prometheus Service as reachable from the host.
prometheus_url() {
  local ip
  ip=$(kubectl -n bench-monitoring get service prometheus -o jsonpath='{.spec.clusterIP}')
  [ -n "$ip" ] || die "Service bench-monitoring/prometheus has no ClusterIP"
  PROM_URL="http://$ip:9090"
}

# --- chart ---------------------------------------------------------------------------------------
# install_chart TESTID [HELM_ARGS...]: installs (or upgrades) the release from the offline copy.
install_chart() {
  local testid=$1 chart; shift
  chart=$(offline_chart_copy "$E2E_WORK/chart")
  helm upgrade --install "$E2E_RELEASE" "$chart" -n "$E2E_NAMESPACE" -f "$E2E_VALUES" \
    --set-string "loadtest.runId=$testid" --wait --timeout 5m "$@" >&2
}

# --- following a TestRun -------------------------------------------------------------------------
# testrun_name: name of the release's TestRun (waits up to 60 s for it to appear).
testrun_name() {
  local name _
  for _ in $(seq 60); do
    name=$(kubectl -n "$E2E_NAMESPACE" get testruns.k6.io -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
    [ -n "$name" ] && { printf '%s\n' "$name"; return 0; }
    sleep 1
  done
  die "no TestRun appeared in namespace $E2E_NAMESPACE within 60 s (is loadtest.enabled true?)"
}

# watch_backend_replicas FILE: records, from the API server, every change of the backend
# Deployment as "<epoch> <spec.replicas> <status.readyReplicas>" until WATCH_PID is killed.
watch_backend_replicas() {
  local file=$1
  : > "$file"
  local name
  name=$(kubectl -n "$E2E_NAMESPACE" get deployments -o name \
    -l "app.kubernetes.io/instance=$E2E_RELEASE,app.kubernetes.io/component=backend")
  [ -n "$name" ] || die "no backend Deployment of release $E2E_RELEASE in namespace $E2E_NAMESPACE"
  # $! is kubectl's PID: killing it ends the watch, and the timestamping loop ends at EOF.
  kubectl -n "$E2E_NAMESPACE" get "$name" --watch \
    -o jsonpath='{.spec.replicas} {.status.readyReplicas}{"\n"}' 2>>"$file.err" \
    > >(exec >> "$file"; while read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done) &
  WATCH_PID=$!
}

# follow_testrun NAME DIR TIMEOUT_S: waits for the TestRun to reach finished or error, capturing the
# runner logs (DIR/runner-N.log), the last stage (DIR/stage) and each runner's exit code
# (DIR/runner-N.exit) before cleanup can delete them. Returns non-zero on timeout.
follow_testrun() {
  local name=$1 dir=$2 timeout=$3 start=$SECONDS stage="" pod code ended=""
  mkdir -p "$dir"; : > "$dir/stage"
  declare -A following=()
  while [ $((SECONDS - start)) -lt "$timeout" ]; do
    if ! stage=$(kubectl -n "$E2E_NAMESPACE" get testruns.k6.io "$name" -o jsonpath='{.status.stage}' 2>"$dir/get.err"); then
      grep -q NotFound "$dir/get.err" || die "cannot read TestRun $name: $(cat "$dir/get.err") (did the cluster stop?)"
      stage=deleted
    fi
    [ "$stage" = "$(tail -n 1 "$dir/stage" 2>/dev/null)" ] || printf '%s\n' "$stage" >> "$dir/stage"
    for pod in $(kubectl -n "$E2E_NAMESPACE" get pods -l "k6_cr=$name,runner=true" -o jsonpath='{.items[*].metadata.name}'); do
      if [ -z "${following[$pod]:-}" ] &&
         [ "$(kubectl -n "$E2E_NAMESPACE" get pod "$pod" -o jsonpath='{.status.phase}')" != Pending ]; then
        kubectl -n "$E2E_NAMESPACE" logs -f "$pod" > "$dir/$pod.log" 2>&1 &
        following[$pod]=$!
      fi
      code=$(kubectl -n "$E2E_NAMESPACE" get pod "$pod" -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}' 2>/dev/null) || code=""
      [ -z "$code" ] || printf '%s\n' "$code" > "$dir/$pod.exit"
    done
    # A runner that fails before the start (e.g. a config error) leaves the TestRun at `created`
    # for good: once every runner has exited, give the operator 20 s, then stop waiting.
    if [ ${#following[@]} -gt 0 ] && all_runners_exited "$dir" "${!following[@]}"; then
      ended=${ended:-$SECONDS}
      [ $((SECONDS - ended)) -lt 20 ] || stage=runners-exited
    fi
    case $stage in
      finished|error|deleted|runners-exited)
        # Runners end before the stage flips; let log streams drain.
        for pod in "${!following[@]}"; do wait "${following[$pod]}" || log "log stream of $pod ended with an error"; done
        return 0 ;;
    esac
    sleep 2
  done
  log "TestRun $name still at stage '$stage' after $timeout s"
  return 1
}

# all_runners_exited DIR POD...: every POD has an exit code recorded in DIR.
all_runners_exited() {
  local dir=$1 pod; shift
  for pod in "$@"; do [ -s "$dir/$pod.exit" ] || return 1; done
}

# extract_summary LOG OUT: writes the JSON printed between the BENCH_SUMMARY_JSON_BEGIN/END lines.
extract_summary() {
  # A pod log interleaves k6's stderr (e.g. remote-write errors with Prometheus down) with stdout:
  # keep only the JSON line between the markers.
  sed -n '/BENCH_SUMMARY_JSON_BEGIN/,/BENCH_SUMMARY_JSON_END/p' "$1" |
    grep '^{"schema":"bench.summary/' > "$2"
  [ -s "$2" ] && jq -e '.schema == "bench.summary/v1"' "$2" >/dev/null
}

# print_summary_tables LOG: prints the human tables handleSummary wrote (the log without the JSON).
print_summary_tables() {
  # k6's own log lines (time=... level=...) are left out.
  sed '/BENCH_SUMMARY_JSON_BEGIN/,/BENCH_SUMMARY_JSON_END/d' "$1" | awk '!/^time="/'
}

# --- Prometheus ----------------------------------------------------------------------------------
# prom_value EXPR: prints the first sample's value of an instant query ("" when empty), evaluated
# at PROM_TIME when set (the end of the run: native histograms have no last_over_time in 2.42, so
# the run's last samples are read within the 5 min lookback of that instant).
prom_value() { prom_cli "$PROM_URL" value "$1" ${PROM_TIME:+--at "$PROM_TIME"}; }

# prom_settled TESTID: waits (30 s at most) until the run's last remote-write push has landed (its
# request count reads the same twice, a second apart; the runners have exited) and prints that
# instant, at which the run's queries are evaluated.
prom_settled() { prom_cli "$PROM_URL" settled "$1"; }

# first_sample_time TESTID: unix time of the run's first k6_http_reqs_total sample (k6 pushes every
# 5 s, so this is within 5 s after the first request); empty without data.
first_sample_time() { local span; span=$(prom_cli "$PROM_URL" span "$1") && printf '%s\n' "${span%% *}"; }

# --- Traefik ---------------------------------------------------------------------------------------
# traefik_metric_sum NAME MATCHER...: the sum of a Traefik sample's values on its /metrics page
# (matchers key=value or key=~regex, as prom_cli text-sum takes them).
traefik_metric_sum() {
  kubectl get --raw "/api/v1/namespaces/bench-traefik/services/traefik-metrics:$TRAEFIK_METRICS_PORT/proxy/metrics" |
    prom_cli "" text-sum "$@"
}

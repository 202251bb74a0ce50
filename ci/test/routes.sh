#!/usr/bin/env bash
# Tests the route experiments (scenarios/route-*.js) against a real Gateway API controller with no
# cluster: a bare kube-apiserver + etcd (ci/lib/apiserver.sh) with the Gateway API v1.4.0 standard
# CRDs from the sigs.k8s.io/gateway-api Go module, Traefik v3.6.12 on the host with its
# kubernetesgateway and kubernetesingress providers watching that API server, and the chart's
# backend nginx.conf as the backend. EndpointSlices may not point at 127.0.0.0/8, so the backend
# runs in a network namespace this script creates (a veth pair on 198.18.0.0/15, the benchmarking
# range) and the Services' EndpointSlices, written by hand (no controllers here), point at it.
# The scenarios run as a user holding exactly the Role of scenarios/contract.json (runnerRole).
# Called by ci/test/scenarios.sh; alone: bash ci/test/routes.sh (ROUTES_KEEP_SUMMARIES=DIR keeps each
# run's summary.json there, e.g. for ci/test/report/testdata). Closing line: "routes: N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/common.sh"
. "$BENCH_ROOT/ci/lib/apiserver.sh"
# TRAEFIK_VERSION, build_traefik, GATEWAY_API_VERSION/_CHANNEL and gateway_api_crds (the e2e's
# pins and the CRDs it applies too; sourced: it runs nothing itself).
. "$BENCH_ROOT/ci/e2e/build-binaries.sh"
NS=bench-test

passed=0 failed=0 skipped=0
WORK="" NETNS_PID="" VETH=""
pids=()

pass() { passed=$((passed + 1)); log "PASS $*"; }
fail() { failed=$((failed + 1)); log "FAIL $*"; }
skip() { skipped=$((skipped + 1)); log "SKIPPED $*"; }
check() {
  local name=$1; shift
  if "$@"; then pass "$name"; else fail "$name"; fi
}

cleanup() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    if kill -0 "${pids[$i]}" 2>/dev/null; then kill "${pids[$i]}"; fi
  done
  for i in "${pids[@]}"; do wait "$i" 2>/dev/null || true; done # SIGTERM'd by us: their status says nothing
  # The namespace dies with its last process; the host end of the veth goes with it.
  if [ -n "$VETH" ] && ip link show "$VETH" >/dev/null 2>&1; then ip link delete "$VETH"; fi
  if [ -n "$WORK" ] && [ -d "$WORK" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

kc() { "$BENCH_CACHE/bin/kubectl" --kubeconfig "$WORK/admin.kubeconfig" "$@"; }

# wait_until SECONDS CMD...: CMD every 0.1 s until it succeeds; 1 after SECONDS.
wait_until() {
  local limit=$(($1 * 10)) i; shift
  for ((i = 0; i < limit; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}

# ---- what the test needs -----------------------------------------------------------------------

ensure_binaries() {
  ensure_kube_binaries
  # Traefik from the Go proxy, as the e2e builds it (cold: about 9 min; stamped, so warm is instant).
  build_traefik >&2
}

# ---- the API server, the Role, the CRDs --------------------------------------------------------

start_apiserver() {
  local admin runner nobody
  admin=$(openssl rand -hex 16) runner=$(openssl rand -hex 16) nobody=$(openssl rand -hex 16)
  printf '%s,admin,uid-admin,"system:masters"\n%s,bench-runner,uid-runner\n%s,bench-nobody,uid-nobody\n' \
    "$admin" "$runner" "$nobody" > "$WORK/tokens.csv"
  start_bare_apiserver "$WORK/api" "$WORK/tokens.csv" pids
  write_token_kubeconfig "$WORK/admin.kubeconfig" "$admin"
  write_token_kubeconfig "$WORK/runner.kubeconfig" "$runner"
  write_token_kubeconfig "$WORK/nobody.kubeconfig" "$nobody"
  ADMIN_TOKEN=$admin
  kc apply --server-side -f "$(gateway_api_crds)" >/dev/null
  kc wait --for condition=Established crd --all --timeout=60s >/dev/null
  # Every rule of the contract's runnerRole (the route experiments' too), as charts/bench/templates/loadtest/rbac.yaml renders them.
  jq -c --arg ns "$NS" '{apiVersion: "v1", kind: "List", items: [
      {apiVersion: "v1", kind: "Namespace", metadata: {name: $ns}},
      {apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: {name: "bench-runner", namespace: $ns},
       rules: [.runnerRole.rules[] | {apiGroups: [.apiGroup], resources: [.resource], verbs: .verbs}
         + (if .target == "backend" then {resourceNames: ["bench-backend"]} else {} end)]},
      {apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: {name: "bench-runner", namespace: $ns},
       roleRef: {apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "bench-runner"},
       subjects: [{apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "bench-runner"}]}]}' \
    "$BENCH_ROOT/scenarios/contract.json" | kc apply -f - >/dev/null
}

# ---- the backend in a network namespace of its own ----------------------------------------------

# start_backend: nginx with the chart's backend nginx.conf in a new network namespace, reachable
# from the host at $BACKEND_IP:8080 over a veth pair (random /30 in 198.18.0.0/15).
start_backend() {
  local a=$((RANDOM % 256)) b=$((RANDOM % 64 * 4))
  BACKEND_IP=198.18.$a.$((b + 2))
  VETH=bnr$$
  unshare --net sleep infinity &
  NETNS_PID=$!
  pids+=("$NETNS_PID")
  wait_until 5 test -e "/proc/$NETNS_PID/ns/net" || die "network namespace did not start"
  sleep 0.2 # unshare execs sleep once the namespace exists: wait for the exec
  [ "$(readlink "/proc/$NETNS_PID/ns/net")" != "$(readlink /proc/$$/ns/net)" ] || die "unshare did not make a namespace"
  ip link add "$VETH" type veth peer name bench0 netns "$NETNS_PID"
  ip addr add "198.18.$a.$((b + 1))/30" dev "$VETH"
  ip link set "$VETH" up
  nsenter -t "$NETNS_PID" -n sh -c "ip addr add $BACKEND_IP/30 dev bench0 && ip link set bench0 up && ip link set lo up"
  mkdir -p "$WORK/backend"
  sh "$BENCH_ROOT/charts/bench/files/backend/make-bodies.sh" "$WORK/backend/bodies"
  sed -e "s#/tmp/#$WORK/backend/#g" -e "s#listen BENCH_PORT reuseport;#listen $BACKEND_IP:8080;#" \
    -e "s#BENCH_BODIES_DIR#$WORK/backend/bodies#" -e "s#worker_processes auto;#worker_processes 1;#" \
    "$BENCH_ROOT/charts/bench/files/backend/nginx.conf" > "$WORK/backend/nginx.conf"
  nsenter -t "$NETNS_PID" -n nginx -c "$WORK/backend/nginx.conf" -p "$WORK/backend" -e "$WORK/backend/error.log" \
    -g 'daemon off;' 2>"$WORK/backend/stderr" &
  pids+=($!)
  wait_until 10 curl -sf "http://$BACKEND_IP:8080/healthz" || die "backend nginx not answering on $BACKEND_IP:8080"
}

# ---- Services, Gateway and Traefik -------------------------------------------------------------

# The chart's names: bench-backend (port 80 -> 8080) and bench-backend-headless (8080), both on the
# backend; bench-empty has no endpoints (the broken change). EndpointSlices by hand: no controllers.
# The Gateway has the chart's listener for the base route (hostname bench.local) and a second one
# on the same port for the route experiments' hosts (*.routes.bench.local, BENCH_GATEWAY_LISTENER):
# a listener's hostname admits only routes whose hostnames it matches.
create_objects() {
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: bench-backend, namespace: $NS}
spec: {ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: bench-backend-headless, namespace: $NS}
spec: {clusterIP: None, ports: [{name: http, port: 8080, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: bench-empty, namespace: $NS}
spec: {ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: bench-backend-a, namespace: $NS, labels: {kubernetes.io/service-name: bench-backend}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints: [{addresses: ["$BACKEND_IP"], conditions: {ready: true, serving: true, terminating: false}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: bench-backend-headless-a, namespace: $NS, labels: {kubernetes.io/service-name: bench-backend-headless}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints: [{addresses: ["$BACKEND_IP"], conditions: {ready: true, serving: true, terminating: false}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: traefik}
spec: {controllerName: traefik.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: bench, namespace: $NS}
spec:
  gatewayClassName: traefik
  listeners:
  - {name: web, port: $PORT_WEB, protocol: HTTP, hostname: bench.local, allowedRoutes: {namespaces: {from: Same}}}
  - {name: routes, port: $PORT_WEB, protocol: HTTP, hostname: "*.routes.bench.local", allowedRoutes: {namespaces: {from: Same}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bench-base, namespace: $NS}
spec:
  parentRefs: [{name: bench, sectionName: web}]
  hostnames: [bench.local]
  rules: [{backendRefs: [{name: bench-backend, port: 80}]}]
EOF
}

# start_traefik: Traefik's Gateway API and Ingress providers on the bare API server; one entrypoint
# (the Gateway listener's port) serves both kinds. No version check, no usage data (nothing leaves).
start_traefik() {
  local api="https://127.0.0.1:$API_PORT" ca="$WORK/api/certs/apiserver.crt"
  "$BENCH_CACHE/bin/traefik" --global.checknewversion=false --global.sendanonymoususage=false \
    --entrypoints.web.address="127.0.0.1:$PORT_WEB" --entrypoints.traefik.address="127.0.0.1:$(free_port)" \
    --providers.kubernetesgateway --providers.kubernetesgateway.endpoint="$api" \
    --providers.kubernetesgateway.token="$ADMIN_TOKEN" --providers.kubernetesgateway.certauthfilepath="$ca" \
    --providers.kubernetesingress --providers.kubernetesingress.endpoint="$api" \
    --providers.kubernetesingress.token="$ADMIN_TOKEN" --providers.kubernetesingress.certauthfilepath="$ca" \
    --log.level=INFO >"$WORK/traefik.log" 2>&1 &
  TRAEFIK_PID=$!
  pids+=("$TRAEFIK_PID")
  # Ready = the base HTTPRoute serves through the Gateway (the Gateway programmed, the backend reached).
  wait_until 60 curl -sf -H 'Host: bench.local' "http://127.0.0.1:$PORT_WEB/healthz" ||
    { tail -20 "$WORK/traefik.log" >&2; die "Traefik did not serve the base HTTPRoute within 60 s"; }
}

# ---- k6 runs -----------------------------------------------------------------------------------

# run_k6 NAME SCRIPT [VAR=VALUE...]: one run as bench-runner; output in $WORK/NAME/. Sets RUN, RC.
run_k6() {
  local name=$1 script=$2; shift 2
  RUN=$WORK/$name RC=0
  mkdir -p "$RUN"
  local t0=$SECONDS
  env BENCH_SUMMARY_DIR="$RUN" BENCH_TESTID="t-$name" BENCH_NAMESPACE=$NS BENCH_KUBECONFIG="$WORK/runner.kubeconfig" \
    BENCH_TARGET_URL="http://127.0.0.1:$PORT_WEB" BENCH_TARGET_HOST=bench.local \
    BENCH_URL_GATEWAY="http://127.0.0.1:$PORT_WEB" BENCH_URL_INGRESS="http://127.0.0.1:$PORT_WEB" \
    BENCH_GATEWAY_NAME=bench BENCH_GATEWAY_LISTENER=routes BENCH_RATE=50 BENCH_CONNECTIONS=20 BENCH_MAX_CONNECTIONS=100 \
    "$@" k6 run -q --log-format raw --address 127.0.0.1:0 "$BENCH_ROOT/scenarios/$script" >"$RUN/stdout" 2>"$RUN/stderr" || RC=$?
  log "k6 $name ($script): exit $RC in $((SECONDS - t0)) s"
  if [ -n "${ROUTES_KEEP_SUMMARIES:-}" ] && [ -f "$RUN/summary.json" ]; then
    mkdir -p "$ROUTES_KEEP_SUMMARIES" && cp "$RUN/summary.json" "$ROUTES_KEEP_SUMMARIES/$name.json"
  fi
}

sj() {
  jq -e "$@" "$RUN/summary.json" >/dev/null || { log "summary.json routes: $(jq -c .routes "$RUN/summary.json" 2>&1)"; return 1; }
}
val() { jq -c "$1" "$RUN/summary.json"; }
# why_not_zero: what an exit 99 was about (dropped iterations and the runner's own verdict).
why_not_zero() {
  jq -c '{dropped: .requests.dropped_iterations, dropped_because: .requests.dropped_because,
    runner_cpu_bound: .runner.cpu_bound, runner_paused: .runner.runtime_bound}' "$RUN/summary.json"
}

# routes_left: how many HTTPRoutes and Ingresses carry the route experiments' label.
routes_left() {
  kc -n $NS get httproutes,ingresses -l bench/route-run -o name | wc -l
}

routes_at_least() { [ "$(routes_left)" -ge "$1" ]; }

# ---- the experiments ---------------------------------------------------------------------------

# The migration A/B in one run: 5 HTTPRoutes, then 5 Ingresses, one every second, while 50 req/s
# flow on the base route. Each route's time from its create call to its first 200 must be there,
# above 0 and bounded (Traefik applies configuration at most every 2 s: its providersThrottleDuration).
test_propagation() {
  kc -n $NS create ingress bench-route-i-99 --rule='left.example/*=bench-backend:80' >/dev/null
  kc -n $NS label ingress bench-route-i-99 bench/route-run=an-earlier-run >/dev/null
  run_k6 propagation route-propagation.js BENCH_ROUTE_KIND=both BENCH_ROUTE_COUNT=5 BENCH_ROUTE_INTERVAL=1s \
    BENCH_DURATION=12s BENCH_ROUTE_TIMEOUT=20s
  local kind
  check "propagation: exit 0 ($RC: $(why_not_zero)), by_path and routes.by_kind have httproute then ingress" \
    eval 'test "$RC" -eq 0 && sj "(.by_path | keys_unsorted) == [\"httproute\", \"ingress\"]
      and (.routes.by_kind | keys_unsorted) == [\"httproute\", \"ingress\"] and .routes.kind == \"both\""'
  for kind in httproute ingress; do
    check "propagation ($kind): 5 created, 5 per-route times, each > 0 and < 10 s ($(val ".routes.by_kind.$kind.propagation_ms"))" \
      sj --arg k $kind '.routes.by_kind[$k] | .created == 5 and .serving == 5 and .unconverged == 0
        and .propagation_ms.count == 5 and .propagation_ms.min > 0 and .propagation_ms.max < 10000
        and .propagation_ms.min <= .propagation_ms.p50 and .propagation_ms.p50 <= .propagation_ms.max'
    check "propagation ($kind): the 404s before each first 200 counted ($(val ".routes.by_kind.$kind.pre_ready_statuses"))" \
      sj --arg k $kind '.routes.by_kind[$k].pre_ready_statuses | .["404"] > 0 and ([.[]] | add) == .["404"]'
    check "propagation ($kind): the base route kept answering 2xx ($(val ".by_path.$kind.requests.total") requests)" \
      sj --arg k $kind '.routes.by_kind[$k].load_non_2xx == 0 and .by_path[$k].requests.total >= 500
        and ([.by_path[$k].errors[]] | add) == 0'
  done
  check "propagation: the table shows the routes" grep -q '^Routes (propagation, 5 per kind)' "$RUN/summary.txt"
  check "propagation: setup deleted the route an earlier run left" grep -q 'deleted 1 route(s) an earlier run left' "$RUN/stderr"
  check "propagation: no labelled route left in the API ($(routes_left))" test "$(routes_left)" -eq 0
}

# Live routes repointed between two Services every 300 ms under 50 req/s: Traefik must answer
# every request 2xx. The same with one Service without endpoints must count errors (exit 99).
test_change() {
  run_k6 change route-change.js BENCH_ROUTE_KIND=both BENCH_ROUTE_COUNT=3 BENCH_ROUTE_INTERVAL=300ms \
    BENCH_DURATION=8s
  local kind
  check "change: exit 0 ($RC: $(why_not_zero); no non-2xx: the threshold holds)" test "$RC" -eq 0
  for kind in httproute ingress; do
    check "change ($kind): at least 15 changes, zero change errors ($(val ".routes.by_kind.$kind | {changes, change_errors}"))" \
      sj --arg k $kind '.routes.by_kind[$k] | .changes >= 15 and .change_errors == 0 and .serving == 3'
    check "change ($kind): the load went through the routes ($(val ".by_path.$kind.requests.total") requests, no error)" \
      sj --arg k $kind '.by_path[$k].requests.total >= 350 and ([.by_path[$k].errors[]] | add) == 0'
  done
  check "change: teardown deleted the run's routes ($(routes_left) left)" test "$(routes_left)" -eq 0

  run_k6 change-broken route-change.js BENCH_ROUTE_COUNT=3 BENCH_ROUTE_INTERVAL=300ms BENCH_RATE=100 \
    BENCH_DURATION=5s BENCH_ROUTE_BACKENDS=bench-backend:80,bench-empty:80
  check "change to a Service without endpoints: exit 99, errors counted ($(val '.routes.by_kind.httproute.change_errors') change errors, $(val .errors.http_5xx) 5xx)" \
    eval 'test "$RC" -eq 99 && sj ".routes.by_kind.httproute.change_errors > 0
      and .routes.by_kind.httproute.change_errors == ([.errors[]] | add)"'
  check "change to a Service without endpoints: the table says FAILED" grep -q 'route-change FAILED for httproute' "$RUN/summary.txt"
  check "change to a Service without endpoints: teardown still deleted the routes" test "$(routes_left)" -eq 0
}

# cpu_ticks PID / rss_kb PID: the process's user+system CPU (clock ticks) and resident memory.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# sample_traefik FILE: every 0.5 s "<unix ms> <cpu ticks> <rss kB>" of Traefik (the controller's
# CPU and memory over the run; in a cluster Prometheus has them, see scenarios/README.md).
sample_traefik() {
  while kill -0 "$TRAEFIK_PID" 2>/dev/null; do
    printf '%s %s %s\n' "$(date +%s%3N)" "$(cpu_ticks "$TRAEFIK_PID")" "$(rss_kb "$TRAEFIK_PID")" >> "$1"
    sleep 0.5
  done
}

# 100 HTTPRoutes at once under load: all must serve, with the times of the milestones, and the
# controller's CPU and memory recorded over the run.
test_scale() {
  local sampler cpu_s rss_start rss_peak hz
  hz=$(getconf CLK_TCK)
  sample_traefik "$WORK/traefik-usage" &
  sampler=$!
  pids+=("$sampler")
  run_k6 scale route-scale.js BENCH_ROUTE_COUNT=100 BENCH_DURATION=60s BENCH_ROUTE_TIMEOUT=50s
  kill "$sampler"; wait "$sampler" 2>/dev/null || true # SIGTERM'd
  cpu_s=$(awk -v hz="$hz" 'NR == 1 {a = $2} {b = $2} END {printf "%.1f", (b - a) / hz}' "$WORK/traefik-usage")
  rss_start=$(awk 'NR == 1 {print int($3 / 1024)}' "$WORK/traefik-usage")
  rss_peak=$(awk '$3 > m {m = $3} END {print int(m / 1024)}' "$WORK/traefik-usage")
  log "Traefik over the route-scale run: ${cpu_s} s CPU, RSS ${rss_start} -> peak ${rss_peak} MiB ($(wc -l < "$WORK/traefik-usage") samples)"
  check "scale: exit 0 ($RC: $(why_not_zero)), all 100 routes served ($(val '.routes.by_kind.httproute | {serving, unconverged, scale_ms}'))" \
    eval 'test "$RC" -eq 0 && sj ".routes.by_kind.httproute | .created == 100 and .serving == 100 and .unconverged == 0
      and .propagation_ms.count == 100"'
  check "scale: the milestones in order (applied <= all serving, after the last apply <= all serving)" \
    sj '.routes.by_kind.httproute.scale_ms | .applied > 0 and .all_serving >= .applied
      and .after_last_apply > 0 and .after_last_apply <= .all_serving'
  check "scale: the base route kept answering while the controller took 100 routes ($(val .by_path.httproute.requests.total) requests, errors $(val '.errors | with_entries(select(.value > 0))'))" \
    sj '.routes.by_kind.httproute.load_non_2xx == 0 and .by_path.httproute.requests.total >= 2900'
  check "scale: Traefik's CPU and memory recorded over the run (${cpu_s} s CPU, peak RSS ${rss_peak} MiB)" \
    awk -v n="$(wc -l < "$WORK/traefik-usage")" -v cpu="$cpu_s" -v rss="$rss_peak" 'BEGIN {exit !(n >= 60 && cpu > 0 && rss > 0)}'
  check "scale: the routes were deleted after the run ($(routes_left) left)" test "$(routes_left)" -eq 0
}

# A run stopped mid-way (SIGTERM, as Kubernetes stops a runner pod) still runs teardown, which
# deletes the routes it had created.
test_stopped_run() {
  local pid rc=0
  RUN=$WORK/stopped
  mkdir -p "$RUN"
  env BENCH_SUMMARY_DIR="$RUN" BENCH_TESTID=t-stopped BENCH_NAMESPACE=$NS BENCH_KUBECONFIG="$WORK/runner.kubeconfig" \
    BENCH_TARGET_URL="http://127.0.0.1:$PORT_WEB" BENCH_TARGET_HOST=bench.local BENCH_URL_GATEWAY="http://127.0.0.1:$PORT_WEB" \
    BENCH_GATEWAY_NAME=bench BENCH_GATEWAY_LISTENER=routes BENCH_RATE=20 BENCH_CONNECTIONS=10 BENCH_ROUTE_COUNT=20 \
    BENCH_ROUTE_INTERVAL=500ms BENCH_DURATION=60s \
    k6 run -q --log-format raw --address 127.0.0.1:0 "$BENCH_ROOT/scenarios/route-propagation.js" >"$RUN/stdout" 2>"$RUN/stderr" &
  pid=$!
  pids+=("$pid")
  if ! wait_until 60 routes_at_least 3; then
    fail "stopped run: the run never created 3 routes"; kill "$pid"; return
  fi
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  check "stopped run: exit 105 (stopped by signal), teardown deleted its routes ($(routes_left) left)" \
    eval 'test "$rc" -eq 105 && test "$(routes_left)" -eq 0'
}

# The Role: a runner without it stops in setup with what it needs; bad values stop k6 before load.
test_refusals() {
  run_k6 forbidden route-propagation.js BENCH_KUBECONFIG="$WORK/nobody.kubeconfig" BENCH_DURATION=2s
  check "rbac: without the Role the run stops naming the httproutes/ingresses rules" \
    eval 'test "$RC" -ne 0 && grep -q "forbidden" "$RUN/stderr" && grep -q "need create, get, update, delete and list on httproutes.gateway.networking.k8s.io" "$RUN/stderr"'
  check "config: BENCH_ROUTE_KIND=grpcroute is refused by k6 inspect" \
    inspect_refuses route-scale.js 'invalid BENCH_ROUTE_KIND=\"grpcroute\": expected httproute, ingress or both' \
    -e BENCH_ROUTE_KIND=grpcroute
  check "config: route-change with one backend is refused by k6 inspect" \
    inspect_refuses route-change.js 'route-change repoints routes between Services: expected at least two' \
    -e BENCH_ROUTE_BACKENDS=bench-backend:80
}

# inspect_refuses SCRIPT PATTERN [-e VAR=VALUE...]: `k6 inspect` (what the k6-operator initializer
# runs) fails with PATTERN in its output.
inspect_refuses() {
  local script=$1 pattern=$2 out=$WORK/inspect.log; shift 2
  if k6 inspect "$@" "$BENCH_ROOT/scenarios/$script" >"$out" 2>&1; then log "k6 inspect $script $* succeeded"; return 1; fi
  grep -qF -- "$pattern" "$out" || { log "expected '$pattern' in:"; cat "$out" >&2; return 1; }
}

main() {
  local t0=$SECONDS
  if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v ip >/dev/null; then
    skip "routes: needs root, unshare and ip (the backend runs in a network namespace)"
    echo "routes: $passed passed, $failed failed, $skipped skipped"
    return 0
  fi
  apt_install nginx-light openssl jq curl iproute2 util-linux
  bash "$BENCH_ROOT/scenarios/runner/build.sh" >/dev/null
  ensure_binaries
  WORK=$(mktemp -d /tmp/bench-routes.XXXXXX)
  chmod 755 "$WORK" # nginx workers (nobody) read the bodies
  PORT_WEB=$(free_port)
  start_apiserver
  start_backend
  create_objects
  start_traefik
  log "Gateway API $GATEWAY_API_VERSION $GATEWAY_API_CHANNEL CRDs; API server 127.0.0.1:$API_PORT, Traefik $TRAEFIK_VERSION on 127.0.0.1:$PORT_WEB, backend $BACKEND_IP:8080 in a network namespace"
  test_propagation
  test_change
  test_scale
  test_stopped_run
  test_refusals
  log "routes tests took $((SECONDS - t0)) s"
  echo "routes: $passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
}

main "$@"

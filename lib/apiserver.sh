# A bare Kubernetes API for tests and benchmarks that only need what a churn VU does to the API:
# etcd + kube-apiserver from $BENCH_CACHE/bin (make cluster-build builds them) on 127.0.0.1, RBAC on, static-token users,
# no controllers and no kubelet (Deployments get no pods). Source after lib/common.sh.

# start_bare_apiserver DIR TOKENS_CSV PIDS_VAR [PREFIX...]: starts etcd and kube-apiserver with their
# state in DIR and the users of TOKENS_CSV (kube-apiserver's --token-auth-file format), appends both
# PIDs to the array named PIDS_VAR (the caller stops them) and sets API_PORT. PREFIX wraps both
# commands (e.g. `taskset -c 0`). Returns once /readyz answers.
start_bare_apiserver() {
  local dir=$1 tokens=$2 bin=$BENCH_CACHE/bin port_etcd port_peer i
  local -n started_pids=$3
  shift 3
  port_etcd=$(free_port) port_peer=$(free_port) API_PORT=$(free_port)
  mkdir -p "$dir"
  "$@" "$bin/etcd" --name bare --data-dir "$dir/etcd" --unsafe-no-fsync \
    --listen-client-urls "http://127.0.0.1:$port_etcd" --advertise-client-urls "http://127.0.0.1:$port_etcd" \
    --listen-peer-urls "http://127.0.0.1:$port_peer" --initial-advertise-peer-urls "http://127.0.0.1:$port_peer" \
    --initial-cluster "bare=http://127.0.0.1:$port_peer" >"$dir/etcd.log" 2>&1 &
  started_pids+=($!)
  openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
  openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
  "$@" "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$port_etcd" \
    --bind-address 127.0.0.1 --secure-port "$API_PORT" --cert-dir "$dir/certs" \
    --advertise-address 127.0.0.1 --endpoint-reconciler-type none \
    --token-auth-file "$tokens" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$dir/sa.pub" \
    --service-account-signing-key-file "$dir/sa.key" --service-cluster-ip-range 10.96.0.0/16 \
    --disable-admission-plugins ServiceAccount --enable-priority-and-fairness=false \
    >"$dir/apiserver.log" 2>&1 &
  started_pids+=($!)
  # /readyz is public (system:public-info-viewer): no token needed to wait for it.
  for i in $(seq 1 120); do
    if curl -ksf -o /dev/null "https://127.0.0.1:$API_PORT/readyz"; then return 0; fi
    sleep 0.5
  done
  tail -20 "$dir/apiserver.log" >&2
  die "kube-apiserver not ready after 60 s (see $dir/apiserver.log)"
}

# write_token_kubeconfig FILE TOKEN: a kubeconfig for the bare API server as the token's user.
write_token_kubeconfig() {
  cat > "$1" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- {name: bare, cluster: {server: "https://127.0.0.1:$API_PORT", insecure-skip-tls-verify: true}}
users:
- {name: user, user: {token: $2}}
contexts:
- {name: bare, context: {cluster: bare, user: user}}
current-context: bare
KUBECONFIG
}

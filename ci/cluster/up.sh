#!/usr/bin/env bash
# Starts the single-node bench cluster as host processes and waits until the node is Ready and
# CoreDNS answers. Idempotent: a healthy cluster is left as it is; a broken one is torn down first.
#   ci/cluster/up.sh            (root; ports and folders in ci/cluster/config.sh, env overrides)
# Afterwards: `. ci/cluster/env.sh` sets KUBECONFIG and PATH (kubectl).
. "$(dirname "$0")/lib.sh"

PKI=$BENCH_CLUSTER_DIR/pki

check_ports_free() {
  local var port users
  for var in BENCH_API_PORT BENCH_ETCD_PORT BENCH_ETCD_PEER_PORT BENCH_KUBELET_PORT \
    BENCH_KUBELET_HEALTHZ_PORT BENCH_PROXY_HEALTHZ_PORT BENCH_PROXY_METRICS_PORT BENCH_CM_PORT \
    BENCH_SCHEDULER_PORT; do
    port=${!var}
    [[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1024 ] && [ "$port" -le 65535 ] \
      || die "$var='$port' is not a port number between 1024 and 65535"
    [ "$port" != 6443 ] || die "$var=6443 is the usual port of another Kubernetes; choose another"
    users=$(ss -Htlnp "sport = :$port" | awk '{print $4, $6}' | head -3)
    [ -z "$users" ] || die "port $port ($var) is in use: $users; stop that process or set $var to a free port"
  done
}

# Too little disk and the node comes up tainted disk-pressure: every pod then stays Pending with
# "untolerated taint(s)". Say it before starting anything, naming the filesystem and what to free.
check_disk_free() {
  local path=$BENCH_CLUSTER_DIR avail_kib
  [[ $BENCH_MIN_FREE_GIB =~ ^[0-9]+$ ]] || die "BENCH_MIN_FREE_GIB='$BENCH_MIN_FREE_GIB' is not a whole number of GiB"
  until [ -e "$path" ]; do path=$(dirname "$path"); done
  avail_kib=$(df -Pk "$path" | awk 'NR == 2 {print $4}')
  [ "$avail_kib" -ge $((BENCH_MIN_FREE_GIB * 1024 * 1024)) ] || die "only $((avail_kib / 1024)) MiB free on \
the filesystem of $path (df $path); the cluster needs $BENCH_MIN_FREE_GIB GiB (BENCH_MIN_FREE_GIB): free some \
(old clones, ~/.cache/go-build) and run up again"
}

# Another Kubernetes (or a crashed bench cluster) would share the KUBE- chains; never mix them.
check_no_foreign_cluster() {
  local chains
  chains=$(cluster_chains | head -5)
  [ -z "$chains" ] || die "iptables chains of a Kubernetes already exist ($(echo "$chains" | tr '\n' ';')); \
if a previous bench cluster crashed run ci/cluster/down.sh, otherwise stop the other cluster first"
}

cluster_healthy() {
  local c
  for c in "${COMPONENTS[@]}"; do component_pid "$c" >/dev/null || return 1; done
  kubectl_admin get --raw /readyz >/dev/null 2>&1 || return 1
  node_ready
}

node_ready() {
  [ "$(kubectl_admin get node "$BENCH_NODE_NAME" \
    -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

# --- certificates -------------------------------------------------------------------------------

# issue_cert NAME CN ORG SAN_LIST USAGE: EC P-256 key and a certificate signed by the cluster CA.
issue_cert() {
  local name=$1 cn=$2 org=$3 san=$4 usage=$5 subj="/CN=$2"
  [ -z "$org" ] || subj="/O=$org/CN=$cn"
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$name.key" 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [ -z "$san" ] || echo "subjectAltName=$san"
  } > "$PKI/$name.ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 30 -sha256 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

# write_kubeconfig NAME SERVER: kubeconfig for the client certificate NAME.
write_kubeconfig() {
  cat > "$PKI/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: bench
  cluster:
    server: $2
    certificate-authority: $PKI/ca.crt
users:
- name: $1
  user:
    client-certificate: $PKI/$1.crt
    client-key: $PKI/$1.key
contexts:
- name: bench
  context: {cluster: bench, user: $1}
current-context: bench
EOF
}

generate_pki() {
  mkdir -p "$PKI"; chmod 700 "$PKI"
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=bench-cluster-ca" -days 30 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$PKI/ca.crt" 2>/dev/null
  local svc=kubernetes.default.svc
  issue_cert apiserver kube-apiserver "" \
    "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:$svc,DNS:$svc.$BENCH_CLUSTER_DOMAIN,IP:127.0.0.1,IP:$BENCH_GATEWAY_IP,IP:$BENCH_API_SERVICE_IP" \
    serverAuth
  issue_cert apiserver-kubelet-client kube-apiserver-kubelet-client "" "" clientAuth
  issue_cert apiserver-etcd-client kube-apiserver-etcd-client "" "" clientAuth
  issue_cert etcd-server etcd "" "DNS:localhost,IP:127.0.0.1" serverAuth
  issue_cert kubelet-server "$BENCH_NODE_NAME" "" "DNS:$BENCH_NODE_NAME,IP:$BENCH_GATEWAY_IP,IP:127.0.0.1" serverAuth
  # Operator access for scripts and tests (the chart itself never gets cluster-admin).
  issue_cert admin bench-admin system:masters "" clientAuth
  issue_cert kube-controller-manager system:kube-controller-manager "" "" clientAuth
  issue_cert kube-scheduler system:kube-scheduler "" "" clientAuth
  issue_cert kubelet "system:node:$BENCH_NODE_NAME" system:nodes "" clientAuth
  issue_cert kube-proxy system:kube-proxy "" "" clientAuth
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/sa.key" 2>/dev/null
  openssl ec -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  local internal="https://$BENCH_GATEWAY_IP:$BENCH_API_PORT" c
  # Host clients use 127.0.0.1 (forwarded, see setup_host_network); components the gateway address.
  write_kubeconfig admin "https://127.0.0.1:$BENCH_API_PORT"
  for c in kube-controller-manager kube-scheduler kubelet kube-proxy; do write_kubeconfig "$c" "$internal"; done
}

# --- host network -------------------------------------------------------------------------------

# set_sysctl KEY VALUE: remembers the old value so down.sh restores it.
set_sysctl() {
  local file="/proc/sys/${1//.//}" old
  old=$(cat "$file")
  [ "$old" = "$2" ] && return 0
  echo "$1 $old" >> "$BENCH_CLUSTER_DIR/sysctl.restore"
  echo "$2" > "$file"
}

setup_host_network() {
  [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || modprobe br_netfilter \
    || die "kernel module br_netfilter is missing: Service replies between pods on the bridge need it"
  # Routing between pods and Services; bridged pod traffic through iptables (Service DNAT replies);
  # 127.0.0.1 NodePorts (kube-proxy DNATs loopback traffic to pods).
  set_sysctl net.ipv4.ip_forward 1
  set_sysctl net.bridge.bridge-nf-call-iptables 1
  set_sysctl net.ipv4.conf.all.route_localnet 1
  # The pod bridge exists before the API server starts: it listens on the gateway address.
  ip link add "$BENCH_BRIDGE" type bridge
  ip addr add "$BENCH_GATEWAY_IP/${BENCH_NODE_POD_CIDR#*/}" dev "$BENCH_BRIDGE"
  ip link set "$BENCH_BRIDGE" up
  # 127.0.0.1:API -> gateway:API, so host clients use loopback like any local cluster.
  iptables -w -t nat -N BENCH-API
  iptables -w -t nat -A BENCH-API -d 127.0.0.1/32 -p tcp --dport "$BENCH_API_PORT" \
    -j DNAT --to-destination "$BENCH_GATEWAY_IP:$BENCH_API_PORT"
  iptables -w -t nat -I OUTPUT -m comment --comment "bench cluster API on 127.0.0.1" -j BENCH-API
  # Pods talk to each other and to this host only: nothing is forwarded off the bridge.
  iptables -w -N BENCH-FORWARD
  iptables -w -A BENCH-FORWARD -i "$BENCH_BRIDGE" -o "$BENCH_BRIDGE" -j ACCEPT
  iptables -w -A BENCH-FORWARD -i "$BENCH_BRIDGE" -j DROP
  iptables -w -A BENCH-FORWARD -o "$BENCH_BRIDGE" -j DROP
  iptables -w -I FORWARD -m comment --comment "bench cluster pods stay on the bridge" -j BENCH-FORWARD
}

setup_cgroups() {
  local d
  for d in /sys/fs/cgroup/*/; do
    [ "$d" = /sys/fs/cgroup/unified/ ] && continue
    mkdir -p "$d$CGROUP_ROOT_NAME"
  done
}

# --- components ---------------------------------------------------------------------------------

start_etcd() {
  start_component etcd etcd --name bench --data-dir "$BENCH_CLUSTER_DIR/etcd" \
    --listen-client-urls "https://127.0.0.1:$BENCH_ETCD_PORT" \
    --advertise-client-urls "https://127.0.0.1:$BENCH_ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$BENCH_ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$BENCH_ETCD_PEER_PORT" \
    --initial-cluster "bench=http://127.0.0.1:$BENCH_ETCD_PEER_PORT" \
    --cert-file "$PKI/etcd-server.crt" --key-file "$PKI/etcd-server.key" \
    --client-cert-auth --trusted-ca-file "$PKI/ca.crt" \
    --listen-metrics-urls "" --log-level warn
}

start_apiserver() {
  start_component kube-apiserver kube-apiserver \
    --bind-address="$BENCH_GATEWAY_IP" --advertise-address="$BENCH_GATEWAY_IP" \
    --secure-port="$BENCH_API_PORT" \
    --etcd-servers="https://127.0.0.1:$BENCH_ETCD_PORT" --etcd-cafile="$PKI/ca.crt" \
    --etcd-certfile="$PKI/apiserver-etcd-client.crt" --etcd-keyfile="$PKI/apiserver-etcd-client.key" \
    --client-ca-file="$PKI/ca.crt" \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$PKI/ca.crt" --kubelet-preferred-address-types=InternalIP \
    --service-cluster-ip-range="$BENCH_SERVICE_CIDR" \
    --service-account-issuer="https://kubernetes.default.svc.$BENCH_CLUSTER_DOMAIN" \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --allow-privileged=true --profiling=false --v=1
}

start_controller_manager() {
  local kc="$PKI/kube-controller-manager.kubeconfig"
  start_component kube-controller-manager kube-controller-manager \
    --kubeconfig="$kc" --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
    --bind-address=127.0.0.1 --secure-port="$BENCH_CM_PORT" \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
    --root-ca-file="$PKI/ca.crt" --service-account-private-key-file="$PKI/sa.key" \
    --use-service-account-credentials=true \
    --allocate-node-cidrs=true --cluster-cidr="$BENCH_POD_CIDR" --node-cidr-mask-size=24 \
    --service-cluster-ip-range="$BENCH_SERVICE_CIDR" --leader-elect=false --profiling=false --v=1
}

start_scheduler() {
  local kc="$PKI/kube-scheduler.kubeconfig"
  start_component kube-scheduler kube-scheduler \
    --kubeconfig="$kc" --authentication-kubeconfig="$kc" --authorization-kubeconfig="$kc" \
    --bind-address=127.0.0.1 --secure-port="$BENCH_SCHEDULER_PORT" --leader-elect=false \
    --profiling=false --v=1
}

start_containerd() {
  local dir=$BENCH_CLUSTER_DIR/containerd
  mkdir -p "$dir" "$BENCH_CLUSTER_DIR/cni/net.d" "$BENCH_CLUSTER_RUN/containerd"
  cat > "$dir/config.toml" <<EOF
version = 2
root = "$dir/root"
state = "$BENCH_CLUSTER_RUN/containerd/state"
[grpc]
  address = "$BENCH_CONTAINERD_SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/bench/pause:3.10"
  # This VM lacks CAP_SYS_RESOURCE: without it runc fails every sandbox.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$BENCH_CLUSTER_RUN/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$BENCH_CLUSTER_DIR/cni/net.d"
EOF
  cat > "$BENCH_CLUSTER_DIR/cni/net.d/10-bench.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "bench",
  "plugins": [{
    "type": "bridge", "bridge": "$BENCH_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {
      "type": "host-local", "dataDir": "$BENCH_CLUSTER_DIR/cni/ipam",
      "ranges": [[{"subnet": "$BENCH_NODE_POD_CIDR", "gateway": "$BENCH_GATEWAY_IP"}]],
      "routes": [{"dst": "0.0.0.0/0"}]
    }
  }]
}
EOF
  start_component containerd containerd --config "$dir/config.toml"
}

start_kubelet() {
  local dir=$BENCH_CLUSTER_DIR/kubelet
  mkdir -p "$dir"
  # Pods resolve only cluster names: nothing leaves the machine.
  echo "# bench cluster: no upstream resolver" > "$dir/resolv.conf"
  cat > "$dir/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $BENCH_GATEWAY_IP
port: $BENCH_KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $BENCH_KUBELET_HEALTHZ_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI/kubelet-server.crt
tlsPrivateKeyFile: $PKI/kubelet-server.key
containerRuntimeEndpoint: unix://$BENCH_CONTAINERD_SOCK
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP_ROOT_NAME
failCgroupV1: false
failSwapOn: false
clusterDNS: [$BENCH_DNS_IP]
clusterDomain: $BENCH_CLUSTER_DOMAIN
resolvConf: $dir/resolv.conf
podLogsDir: $BENCH_CLUSTER_DIR/pod-logs
# A shared build machine: evict only when really short. Absolute, not a share: 2% of a 250 GB disk
# is 5 GB, which a machine full of clones and Go caches crossed mid-test (ci/cluster/config.sh).
evictionHard: {memory.available: 100Mi, nodefs.available: $BENCH_EVICTION_FREE, imagefs.available: $BENCH_EVICTION_FREE, nodefs.inodesFree: 2%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
  start_component kubelet kubelet --config="$dir/config.yaml" \
    --kubeconfig="$PKI/kubelet.kubeconfig" --root-dir="$dir/root" \
    --hostname-override="$BENCH_NODE_NAME" --node-ip="$BENCH_GATEWAY_IP" --v=1 \
    --containerd="$BENCH_CONTAINERD_SOCK"
}

start_kube_proxy() {
  local dir=$BENCH_CLUSTER_DIR/kube-proxy
  mkdir -p "$dir"
  cat > "$dir/config.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $PKI/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $BENCH_POD_CIDR
hostnameOverride: $BENCH_NODE_NAME
healthzBindAddress: 127.0.0.1:$BENCH_PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$BENCH_PROXY_METRICS_PORT
# NodePorts answer on loopback only (never on eth0).
nodePortAddresses: [127.0.0.0/8]
iptables: {localhostNodePorts: true}
# Leave the host's conntrack sysctls alone.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  start_component kube-proxy kube-proxy --config="$dir/config.yaml" --v=1
}

# --- cluster objects ----------------------------------------------------------------------------

apply_cluster_objects() {
  kubectl_admin apply -f - >/dev/null <<'EOF'
# kube-apiserver -> kubelet (logs, exec, port-forward)
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bench:apiserver-kubelet-client}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:kubelet-api-admin}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: kube-apiserver-kubelet-client}]
EOF
  sed -e "s#BENCH_DNS_IP#$BENCH_DNS_IP#" -e "s#BENCH_CLUSTER_DOMAIN#$BENCH_CLUSTER_DOMAIN#" \
    -e "s#BENCH_COREDNS_VERSION#$BENCH_COREDNS_VERSION#" \
    "$BENCH_ROOT/ci/cluster/coredns.yaml" | kubectl_admin apply -f - >/dev/null
}

show_failure() {
  log "cluster did not come up: $1; last log lines:"
  local c
  for c in "${COMPONENTS[@]}"; do
    [ -f "$LOG_DIR/$c.log" ] || continue
    echo "--- $c" >&2
    tail -n 8 "$LOG_DIR/$c.log" >&2
  done
  die "$1 (logs in $LOG_DIR; ci/cluster/down.sh cleans up)"
}

main() {
  require_root "ci/cluster/up.sh"
  lock_cluster
  local t0=$SECONDS
  bash "$BENCH_ROOT/ci/cluster/build.sh"
  if [ -d "$BENCH_CLUSTER_DIR" ] || [ -d "$BENCH_CLUSTER_RUN" ]; then
    if cluster_healthy; then
      log "cluster already up (kubeconfig $BENCH_KUBECONFIG)"
      return 0
    fi
    log "a previous cluster is only partly running: taking it down first"
    bash "$BENCH_ROOT/ci/cluster/down.sh"
  fi
  check_ports_free
  check_disk_free
  check_no_foreign_cluster
  mkdir -p "$BENCH_CLUSTER_DIR" "$BENCH_CLUSTER_RUN"
  local p
  for p in "${HOST_PATHS[@]}"; do [ -e "$p" ] || echo "$p" >> "$BENCH_CLUSTER_DIR/host-paths.created"; done
  generate_pki
  setup_host_network
  setup_cgroups
  start_etcd
  start_containerd
  wait_for 30 "etcd up" curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/apiserver-etcd-client.crt" \
    --key "$PKI/apiserver-etcd-client.key" "https://127.0.0.1:$BENCH_ETCD_PORT/health" \
    || show_failure "etcd did not answer on 127.0.0.1:$BENCH_ETCD_PORT"
  start_apiserver
  wait_for 60 "containerd up" ctr --address "$BENCH_CONTAINERD_SOCK" version \
    || show_failure "containerd did not start"
  bash "$BENCH_ROOT/ci/images/build.sh" pause coredns
  wait_for 90 "API server ready" kubectl_admin get --raw /readyz || show_failure "kube-apiserver not ready"
  start_controller_manager
  start_scheduler
  start_kubelet
  start_kube_proxy
  apply_cluster_objects
  wait_for 90 "node $BENCH_NODE_NAME Ready" node_ready || show_failure "node $BENCH_NODE_NAME not Ready"
  wait_for 120 "CoreDNS ready" kubectl_admin -n kube-system rollout status deployment/coredns --timeout=2s \
    || show_failure "CoreDNS not ready"
  wait_for 30 "default service account" kubectl_admin -n default get serviceaccount default \
    || show_failure "no default service account"
  log "cluster up in $((SECONDS - t0)) s: . ci/cluster/env.sh  (KUBECONFIG=$BENCH_KUBECONFIG)"
}

main "$@"

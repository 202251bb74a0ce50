# Functions shared by ci/cluster/up.sh, down.sh and the smoke test: processes, leftovers, waits.
# shellcheck shell=bash
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
. "$BENCH_ROOT/ci/cluster/config.sh"

PID_DIR=$BENCH_CLUSTER_RUN/pids
LOG_DIR=$BENCH_CLUSTER_DIR/logs
# Order matters: down stops them in reverse.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy)
# cgroup v1 parent of every pod (kubelet cgroupRoot); one folder per controller hierarchy.
CGROUP_ROOT_NAME=bench-cluster
# Prefixes of the iptables chains the cluster creates: kubelet and kube-proxy (KUBE-), ours (BENCH-).
CHAIN_PATTERN='^(KUBE-|BENCH-|CNI-)'

kubectl_admin() { kubectl --kubeconfig "$BENCH_KUBECONFIG" "$@"; }

component_pid() {
  local f="$PID_DIR/$1.pid" pid
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  [ -d "/proc/$pid" ] || return 1
  echo "$pid"
}

# start_component NAME CMD...: starts CMD in its own session with its log in $LOG_DIR/NAME.log.
start_component() {
  local name=$1; shift
  mkdir -p "$PID_DIR" "$LOG_DIR"
  setsid "$@" >"$LOG_DIR/$name.log" 2>&1 </dev/null &
  echo $! > "$PID_DIR/$name.pid"
}

# stop_pid PID NAME: SIGTERM, up to 10 s, then SIGKILL.
stop_pid() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 100); do
    [ -d "/proc/$pid" ] || return 0
    sleep 0.1
  done
  log "$2 (pid $pid) ignored SIGTERM for 10 s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || return 0
}

# cluster_pids: every live process that belongs to the cluster: recorded components, containerd
# shims of our socket, and everything in the pods' cgroups.
cluster_pids() {
  local c pid p
  for c in "${COMPONENTS[@]}"; do component_pid "$c" || :; done
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    if tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -qF -- "$BENCH_CLUSTER_RUN/"; then echo "$pid"; fi
  done
  if [ -d "/sys/fs/cgroup/pids/$CGROUP_ROOT_NAME" ]; then
    find "/sys/fs/cgroup/pids/$CGROUP_ROOT_NAME" -name cgroup.procs -exec cat {} + 2>/dev/null
  fi
}

cluster_mounts() {
  awk '{print $5}' /proc/self/mountinfo | grep -E "^($BENCH_CLUSTER_DIR|$BENCH_CLUSTER_RUN)(/|$)" | sort -r
}

# cluster_chains: "<iptables|ip6tables> <table> <chain>" for every chain we create.
cluster_chains() {
  local cmd t
  for cmd in iptables ip6tables; do
    command -v "$cmd" >/dev/null || continue
    for t in filter nat mangle raw; do
      "$cmd" -w -t "$t" -S 2>/dev/null | awk -v c="$cmd" -v t="$t" '$1 == "-N" {print c, t, $2}' \
        | awk -v re="$CHAIN_PATTERN" '$3 ~ re'
    done
  done
}

cluster_cgroups() {
  local d
  for d in /sys/fs/cgroup/*/; do
    [ -d "$d$CGROUP_ROOT_NAME" ] && echo "$d$CGROUP_ROOT_NAME"
  done
  return 0
}

# leftovers: prints one line per thing of the cluster that still exists (empty = clean).
leftovers() {
  local pid
  for pid in $(cluster_pids | sort -u); do
    echo "process $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-120)"
  done
  cluster_mounts | sed 's/^/mount /'
  cluster_chains | sed 's/^/iptables chain /'
  ip link show "$BENCH_BRIDGE" >/dev/null 2>&1 && echo "bridge $BENCH_BRIDGE"
  ip -o link show master "$BENCH_BRIDGE" 2>/dev/null | awk -F': ' '{print "veth " $2}'
  cluster_cgroups | sed 's/^/cgroup /'
  local d
  for d in "$BENCH_CLUSTER_DIR" "$BENCH_CLUSTER_RUN"; do [ -e "$d" ] && echo "folder $d"; done
  for d in $(pod_netns_paths); do echo "netns $d"; done
  return 0
}

# pod_netns_paths: network namespaces of the cluster's pods. From containerd when it runs (the
# sandbox specs name them); otherwise every /run/netns/cni-* whose eth0 has an address of this
# node's pod range (a crashed cluster left them).
pod_netns_paths() {
  local id
  if [ -S "$BENCH_CONTAINERD_SOCK" ] && ctr --address "$BENCH_CONTAINERD_SOCK" version >/dev/null 2>&1; then
    for id in $(ctr --address "$BENCH_CONTAINERD_SOCK" -n k8s.io containers ls -q 2>/dev/null); do
      ctr --address "$BENCH_CONTAINERD_SOCK" -n k8s.io containers info "$id" 2>/dev/null \
        | jq -r '.Spec.linux.namespaces[]? | select(.type == "network") | .path // empty'
    done | sort -u | while read -r id; do [ -e "$id" ] && echo "$id"; done
  fi
  local prefix=${BENCH_NODE_POD_CIDR%.*}. n
  for n in /run/netns/cni-*; do
    [ -e "$n" ] || continue
    ip -n "$(basename "$n")" -4 -o addr show dev eth0 2>/dev/null | grep -q " inet ${prefix//./\\.}" && echo "$n"
  done
  return 0
}

# wait_for SECONDS DESCRIPTION CMD...: retries CMD every half second.
wait_for() {
  local limit=$1 what=$2; shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.5
  done
  log "$what ($((SECONDS - deadline + limit)) s)"
}

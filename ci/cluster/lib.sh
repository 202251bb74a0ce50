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

# lock_cluster: up and down of this machine's cluster take turns (test parts may run in parallel).
# The lock file lives in /run/lock, Debian's folder for such files, and is never removed.
lock_cluster() {
  [ -z "${BENCH_CLUSTER_LOCKED:-}" ] || return 0
  exec 7>/run/lock/bench-cluster.lock
  flock -w 600 7 || die "another ci/cluster/up.sh or down.sh held /run/lock/bench-cluster.lock for 10 min"
  export BENCH_CLUSTER_LOCKED=1
}

kubectl_admin() { kubectl --kubeconfig "$BENCH_KUBECONFIG" "$@"; }

# process_cmdline PID: its command line with spaces; empty when the process is gone.
process_cmdline() { { tr '\0' ' ' < "/proc/$1/cmdline"; } 2>/dev/null || :; }

# procs_mentioning TEXT: pids whose command line contains TEXT (grep itself excluded).
procs_mentioning() {
  { grep -lF -- "$1" /proc/[0-9]*/cmdline; } 2>/dev/null | cut -d/ -f3 | grep -vx "$BASHPID" \
    | while read -r p; do [ "$(process_cmdline "$p" | cut -d' ' -f1)" = grep ] || echo "$p"; done
}

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
  # fd 7 is the up/down lock: the long-running component must not keep it.
  BENCH_CLUSTER_LOCKED="" setsid "$@" >"$LOG_DIR/$name.log" 2>&1 </dev/null 7>&- &
  echo $! > "$PID_DIR/$name.pid"
}

# stop_pid PID NAME: SIGTERM, up to 3 s, then SIGKILL (the cluster state is thrown away anyway).
stop_pid() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 30); do
    [ -d "/proc/$pid" ] || return 0
    sleep 0.1
  done
  log "$2 (pid $pid) ignored SIGTERM for 3 s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || return 0
}

# cluster_pids: every live process that belongs to the cluster: recorded components, containerd
# shims of our socket, and everything in the pods' cgroups.
cluster_pids() {
  local c pid p
  for c in "${COMPONENTS[@]}"; do component_pid "$c" || :; done
  # One grep over every command line (a loop of subshells takes a second per scan).
  for p in $(procs_mentioning "$BENCH_CLUSTER_RUN/") $(procs_mentioning "$BENCH_CLUSTER_DIR/"); do echo "$p"; done
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
    echo "process $pid: $(process_cmdline "$pid" | cut -c1-120)"
  done
  cluster_mounts | sed 's/^/mount /'
  cluster_chains | sed 's/^/iptables chain /'
  ip link show "$BENCH_BRIDGE" >/dev/null 2>&1 && echo "bridge $BENCH_BRIDGE"
  ip -o link show master "$BENCH_BRIDGE" 2>/dev/null | awk -F': ' '{print "veth " $2}'
  cluster_cgroups | sed 's/^/cgroup /'
  local d
  for d in "$BENCH_CLUSTER_DIR" "$BENCH_CLUSTER_RUN"; do [ -e "$d" ] && echo "folder $d"; done
  for d in $(pod_netns_paths); do echo "netns $d"; done
  host_path_entries | sed 's/^/host file /'
  return 0
}

# containerd_ids: ids of every container and sandbox in our containerd (empty when it is not running).
containerd_ids() {
  if [ -S "$BENCH_CONTAINERD_SOCK" ] && ctr --address "$BENCH_CONTAINERD_SOCK" version >/dev/null 2>&1; then
    ctr --address "$BENCH_CONTAINERD_SOCK" -n k8s.io containers ls -q
  fi
}

# pod_netns_paths: network namespaces of the cluster's pods. From containerd when it runs (the
# sandbox specs name them); otherwise every /run/netns/cni-* whose eth0 has an address of this
# node's pod range (a crashed cluster left them).
pod_netns_paths() {
  local id
  for id in $(containerd_ids); do
    ctr --address "$BENCH_CONTAINERD_SOCK" -n k8s.io containers info "$id" 2>/dev/null \
      | jq -r '.Spec.linux.namespaces[]? | select(.type == "network") | .path // empty'
  done | sort -u | while read -r id; do [ -e "$id" ] && echo "$id"; done
  local prefix=${BENCH_NODE_POD_CIDR%.*}. n
  for n in /run/netns/cni-*; do
    [ -e "$n" ] || continue
    ip -n "$(basename "$n")" -4 -o addr show dev eth0 2>/dev/null | grep -q " inet ${prefix//./\\.}" && echo "$n"
  done
  return 0
}

# Host folders that containerd, CNI and kubelet use at fixed paths. up.sh records those that did not
# exist before it (down.sh then removes them whole); our entries inside them are removed either way.
HOST_PATHS=(/run/containerd /run/netns /var/lib/cni /var/lib/kubelet /var/log/containers)

# host_path_entries: our files in the fixed host folders: pod log links into our folder, CNI result
# cache of our network ("bench-<id>-<if>"), and shim sockets of our containerd (containerd 1.6
# names them sha256("<address>/<namespace>/<id>") under /run/containerd/s).
host_path_entries() {
  local f
  for f in /var/log/containers/*; do
    [ -L "$f" ] && case $(readlink "$f") in "$BENCH_CLUSTER_DIR"/*) echo "$f" ;; esac
  done
  for f in /var/lib/cni/results/bench-*; do [ -e "$f" ] && echo "$f"; done
  local ns id
  while read -r ns id; do
    f=$(shim_socket "$ns" "$id")
    [ -e "$f" ] && echo "$f"
  done < <(shim_ids)
  return 0
}

shim_socket() { echo "/run/containerd/s/$(printf '%s' "$BENCH_CONTAINERD_SOCK/$1/$2" | sha256sum | cut -d' ' -f1)"; }

# shim_ids: "<namespace> <id>" of every live containerd shim started for our socket.
shim_ids() {
  local p
  for p in $(procs_mentioning "$BENCH_CONTAINERD_SOCK"); do
    process_cmdline "$p" | sed -n 's/.*-namespace \([^ ]*\) -id \([^ ]*\) -address '"${BENCH_CONTAINERD_SOCK//\//\\/}"'.*/\1 \2/p'
  done
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

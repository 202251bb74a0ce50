#!/usr/bin/env bash
# Stops the bench cluster and removes everything `up` created: processes (components, containerd
# shims, pod processes), mounts, pod network namespaces, iptables chains, the bridge, cgroups,
# folders, and the sysctls it changed. Idempotent; ends by checking that nothing is left.
#   ci/cluster/down.sh   (root)
. "$(dirname "$0")/lib.sh"

# stop_components: SIGTERM to every component but containerd at once, SIGKILL after 3 s.
stop_components() {
  local c pid pids=()
  for c in "${COMPONENTS[@]}"; do
    [ "$c" = containerd ] && continue
    if pid=$(component_pid "$c"); then pids+=("$pid"); kill -TERM "$pid" 2>/dev/null || :; fi
  done
  for pid in "${pids[@]}"; do stop_pid "$pid" "$(process_cmdline "$pid" | cut -d' ' -f1)"; done
}

# Pod processes first (SIGKILL to every process in the pods' cgroups), then containerd and shims.
stop_runtime() {
  local pid
  if [ -d "/sys/fs/cgroup/pids/$CGROUP_ROOT_NAME" ]; then
    find "/sys/fs/cgroup/pids/$CGROUP_ROOT_NAME" -name cgroup.procs -exec cat {} + | while read -r pid; do
      kill -KILL "$pid" 2>/dev/null || :
    done
  fi
  if pid=$(component_pid containerd); then stop_pid "$pid" containerd; fi
  for pid in $(cluster_pids | sort -u); do
    kill -KILL "$pid" 2>/dev/null || :
  done
  local i
  for i in $(seq 1 50); do
    [ -z "$(cluster_pids)" ] && return 0
    sleep 0.1
  done
}

unmount_all() {
  local m
  for m in $(cluster_mounts); do
    umount "$m" 2>/dev/null || umount -l "$m"
  done
}

remove_netns() {
  local n
  for n in "$@"; do
    if grep -qF " $n " /proc/self/mountinfo; then umount "$n" 2>/dev/null || umount -l "$n"; fi
    rm -f "$n"
  done
}

# remove_chains: drop the jumps from built-in chains into ours, then flush and delete ours.
remove_chains() {
  local cmd t rule
  for cmd in iptables ip6tables; do
    command -v "$cmd" >/dev/null || continue
    for t in filter nat mangle raw; do
      "$cmd" -w -t "$t" -S 2>/dev/null \
        | awk -v re="$CHAIN_PATTERN" '$1 == "-A" && $2 !~ re { for (i = 3; i < NF; i++) if ($i == "-j" && $(i + 1) ~ re) { print; break } }' \
        | while read -r rule; do
            # shellcheck disable=SC2086
            eval "$cmd -w -t $t -D ${rule#-A }"
          done
    done
  done
  local chains
  chains=$(cluster_chains)
  [ -n "$chains" ] || return 0
  while read -r cmd t rule; do "$cmd" -w -t "$t" -F "$rule"; done <<<"$chains"
  while read -r cmd t rule; do "$cmd" -w -t "$t" -X "$rule"; done <<<"$chains"
}

remove_cgroups() {
  local d
  for d in $(cluster_cgroups); do
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || find "$d" -depth -type d -exec rmdir {} \;
  done
}

restore_sysctls() {
  local f="$BENCH_CLUSTER_DIR/sysctl.restore" key value
  [ -f "$f" ] || return 0
  while read -r key value; do echo "$value" > "/proc/sys/${key//.//}"; done < <(tac "$f")
}

remove_host_paths() {
  local p
  host_path_entries | while read -r p; do rm -f "$p"; done
  [ -f "$BENCH_CLUSTER_DIR/host-paths.created" ] || return 0
  while read -r p; do
    if [ "$p" = /run/netns ] && [ -n "$(ls -A /run/netns 2>/dev/null)" ]; then continue; fi
    rm -rf "$p"
  done < "$BENCH_CLUSTER_DIR/host-paths.created"
}

main() {
  require_root "ci/cluster/down.sh"
  lock_cluster
  local t0=$SECONDS netns
  netns=$(pod_netns_paths | sort -u)
  # Shim sockets are named after the shims' ids: read them before the shims are gone.
  local sockets cni_results
  sockets=$(shim_ids | sort -u | while read -r ns id; do shim_socket "$ns" "$id"; done)
  # libcni caches results per sandbox in /var/lib/cni/results/<network>-<sandbox id>-<interface>.
  cni_results=$(containerd_ids | while read -r id; do
    for f in /var/lib/cni/results/*-"$id"-*; do if [ -e "$f" ]; then echo "$f"; fi; done
  done)
  stop_components
  stop_runtime
  unmount_all
  # A sandbox created while we were stopping is not in the first list: look again.
  # shellcheck disable=SC2046,SC2086  # paths have no spaces; split on purpose
  netns=$(printf '%s\n' $netns $(pod_netns_paths) | sort -u)
  # shellcheck disable=SC2086
  remove_netns $netns
  remove_chains
  if ip link show "$BENCH_BRIDGE" >/dev/null 2>&1; then ip link del "$BENCH_BRIDGE"; fi
  remove_cgroups
  restore_sysctls
  remove_host_paths
  # shellcheck disable=SC2086
  [ -z "$sockets$cni_results" ] || rm -f $sockets $cni_results
  rm -rf "$BENCH_CLUSTER_DIR" "$BENCH_CLUSTER_RUN"
  local left
  left=$(leftovers)
  for n in $netns $sockets $cni_results; do [ -e "$n" ] && left+=$'\n'"$n"; done
  [ -z "${left//$'\n'/}" ] || die "cluster down left these behind:"$'\n'"$left"
  log "cluster down in $((SECONDS - t0)) s: no process, mount, netns, iptables chain, bridge, cgroup or folder left"
}

main "$@"

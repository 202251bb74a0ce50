# Versions, ports, addresses and folders of the local cluster. Sourced by the ci/cluster scripts and
# by ci/images/build.sh (which imports into this cluster's containerd). Every port is an env override.
# shellcheck shell=bash

# The Kubernetes and CoreDNS releases built from the Go module proxy: pinned, with why, in
# ci/versions.env (found beside this file: some callers source it without BENCH_ROOT set).
# shellcheck source=../versions.env
. "$(dirname "${BASH_SOURCE[0]}")/../versions.env"
BENCH_K8S_VERSION=$KUBERNETES_VERSION
BENCH_COREDNS_VERSION=$COREDNS_VERSION

# Ports. All listen on 127.0.0.1 except the API server, which listens on the pod bridge gateway
# (pods must reach it through the `kubernetes` Service) and is forwarded from 127.0.0.1 by an
# iptables DNAT rule. Defaults avoid the usual 6443/2379/10250 so a real cluster can coexist.
BENCH_API_PORT=${BENCH_API_PORT:-16443}
BENCH_ETCD_PORT=${BENCH_ETCD_PORT:-16379}
BENCH_ETCD_PEER_PORT=${BENCH_ETCD_PEER_PORT:-16380}
BENCH_KUBELET_PORT=${BENCH_KUBELET_PORT:-16250}
BENCH_KUBELET_HEALTHZ_PORT=${BENCH_KUBELET_HEALTHZ_PORT:-16248}
BENCH_PROXY_HEALTHZ_PORT=${BENCH_PROXY_HEALTHZ_PORT:-16256}
BENCH_PROXY_METRICS_PORT=${BENCH_PROXY_METRICS_PORT:-16249}
BENCH_CM_PORT=${BENCH_CM_PORT:-16257}
BENCH_SCHEDULER_PORT=${BENCH_SCHEDULER_PORT:-16259}

# Network (shared with the chart, the e2e test and the demo: ci/cluster/README.md).
BENCH_NODE_NAME=bench-node
BENCH_BRIDGE=bench0
BENCH_POD_CIDR=10.244.0.0/16
BENCH_NODE_POD_CIDR=10.244.0.0/24
BENCH_GATEWAY_IP=10.244.0.1
BENCH_SERVICE_CIDR=10.96.0.0/16
BENCH_API_SERVICE_IP=10.96.0.1
BENCH_DNS_IP=10.96.0.10
BENCH_CLUSTER_DOMAIN=cluster.local

# Folders. Everything `up` creates at run time lives under these two; `down` removes both.
BENCH_CLUSTER_DIR=${BENCH_CLUSTER_DIR:-/var/lib/bench-cluster}
BENCH_CLUSTER_RUN=${BENCH_CLUSTER_RUN:-/run/bench-cluster}
BENCH_CONTAINERD_SOCK=$BENCH_CLUSTER_RUN/containerd/containerd.sock
BENCH_KUBECONFIG=$BENCH_CLUSTER_DIR/pki/admin.kubeconfig

# Disk. The kubelet evicts every pod and taints the node (disk-pressure: nothing schedules) when
# its filesystem has less than BENCH_EVICTION_FREE left; up refuses to start with less than
# BENCH_MIN_FREE_GIB free there (the images, etcd, logs and runs of a test take about 3 GiB).
BENCH_EVICTION_FREE=1Gi
BENCH_MIN_FREE_GIB=${BENCH_MIN_FREE_GIB:-4}

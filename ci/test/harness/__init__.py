"""Python helpers the pytest parts share: processes and readiness waits (procs), k6 runs and their
summaries (k6), a bare kube-apiserver + etcd (apiserver)."""

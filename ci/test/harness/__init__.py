"""Python helpers the pytest parts share: processes and readiness waits (procs), k6 runs and their
summaries (k6), a bare kube-apiserver + etcd (apiserver), real servers and k6 remote-write runs on
127.0.0.1 (servers: the dashboards and report parts' Prometheus and nginx), the checkout's packages on
PYTHONPATH for the programs the tests start (pythonpath)."""

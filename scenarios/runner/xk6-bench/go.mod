module bench.local/xk6-bench

go 1.21

require go.k6.io/k6 v0.51.0

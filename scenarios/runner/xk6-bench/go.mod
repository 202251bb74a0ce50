module bench.local/xk6-bench

go 1.25.0

require (
	go.k6.io/k6 v1.8.1
	golang.org/x/net v0.56.0 // the version k6 v1.8.1 requires (HTTP/2 of the server-name transports)
)

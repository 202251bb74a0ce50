module bench.local/xk6-bench

go 1.21

require (
	go.k6.io/k6 v0.51.0
	golang.org/x/net v0.23.0 // the version k6 v0.51.0 requires (HTTP/2 of the server-name transports)
)

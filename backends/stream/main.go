// Command bench-stream is bench's stream backend for the long-lived experiment: it holds HTTP
// streams (chunked or HTTP/2), WebSocket connections and gRPC server streams open and sends one
// time-slotted message per interval on each, so a client that loses a stream and reconnects knows
// exactly which messages it missed. One port serves HTTP/1.1, h2c and gRPC.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"google.golang.org/grpc"
)

// server is the state the three kinds of stream share: the drain that ends them all.
type server struct {
	logger *log.Logger
	// stopping is closed on SIGTERM: new streams are refused from then on (503, gRPC Unavailable).
	stopping chan struct{}
	// ending is closed when the drain is over: every open stream ends cleanly at once.
	ending   chan struct{}
	stopOnce sync.Once
	endOnce  sync.Once
	open     sync.WaitGroup
}

func newServer(logger *log.Logger) *server {
	return &server{logger: logger, stopping: make(chan struct{}), ending: make(chan struct{})}
}

func (s *server) stop()            { s.stopOnce.Do(func() { close(s.stopping) }) }
func (s *server) end()             { s.endOnce.Do(func() { close(s.ending) }) }
func (s *server) isStopping() bool { return closed(s.stopping) }

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// handler is the one handler of the listening port: gRPC by content type (HTTP/2 only, as gRPC
// is), the rest by path; h2c makes the port speak HTTP/2 without TLS (prior knowledge and
// Upgrade: h2c), which controllers use towards upstreams that declare it.
func (s *server) handler() http.Handler {
	grpcServer := grpc.NewServer()
	grpcServer.RegisterService(&ticksServiceDesc, s)
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", s.healthz)
	mux.HandleFunc("/stream/healthz", s.healthz)
	mux.HandleFunc("/stream/ticks", s.ticks)
	mux.HandleFunc("/stream/ws", s.websocket)
	root := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			grpcServer.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
	return h2c.NewHandler(root, &http2.Server{})
}

// healthz answers 200 until SIGTERM, then 503 so the pod leaves its Service's endpoints.
func (s *server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	if s.isStopping() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "stopping")
		return
	}
	fmt.Fprintln(w, "ok")
}

// shutdown runs on SIGTERM: stop accepting, let open streams run for drain, then end them all
// cleanly and wait (at most grace) for their handlers to return.
func (s *server) shutdown(srv *http.Server, drain, grace time.Duration) {
	s.stop()
	s.logger.Printf("SIGTERM: no new streams; open streams end in %s", drain)
	// Shutdown closes the listeners at once; it then waits for HTTP/1.1 streams, which end below.
	idle := make(chan struct{})
	go func() { _ = srv.Shutdown(context.Background()); close(idle) }()
	ended := make(chan struct{})
	go func() { s.open.Wait(); close(ended) }()
	select {
	case <-time.After(drain):
	case <-ended:
	}
	s.end()
	late := time.After(grace)
	select {
	case <-ended:
	case <-late:
		s.logger.Printf("streams still open %s after their end: exiting anyway", grace)
	}
	// A handler that returned may not have had its response's last chunk written yet: closing now
	// would cut it (the client sees an unexpected EOF, not a clean end). Shutdown returns once every
	// HTTP/1.1 connection is idle.
	select {
	case <-idle:
	case <-late:
	}
	_ = srv.Close()
}

func main() {
	listen := flag.String("listen", ":8080", "address to listen on (HTTP/1.1, h2c and gRPC)")
	drain := flag.Duration("drain", 0, "after SIGTERM, keep open streams running this long before ending them")
	flag.Parse()
	if *drain < 0 {
		fmt.Fprintf(os.Stderr, "bench-stream: --drain %s: must be 0 or more\n", *drain)
		os.Exit(2)
	}
	logger := log.New(os.Stderr, "", log.LstdFlags|log.Lmicroseconds|log.LUTC)
	s := newServer(logger)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		logger.Fatalf("listen %s: %v", *listen, err)
	}
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		s.shutdown(srv, *drain, 5*time.Second)
		close(done)
	}()
	logger.Printf("listening on %s (HTTP/1.1, h2c, gRPC)", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Fatalf("serve: %v", err)
	}
	<-done
	logger.Printf("stopped")
}

// Package bench is the k6/x/bench JavaScript module: the connection behaviour bench's load needs
// and k6's http module cannot express, the runner's own scheduling and GC figures (runtime.go) and
// its cgroup's CPU throttling (cgroup.go).
//
//   - Replays. Go's HTTP transport silently re-sends an idempotent GET when a reused keep-alive
//     connection dies before the first response byte; k6 then reports one successful request and
//     the failure vanishes. wrk (the published tests) counts it as a read error. Each replay is
//     counted here as bench_errors{class="read", cause="replayed"}, with the VU's tags.
//   - Keep-alive off per VU. A `Connection: close` header alone does not stop Go from reusing a
//     connection the server keeps open; disabling keep-alive on the VU's transport does.
//   - TLS server name from the Host header. Runners reach a controller by its Service name with
//     the route's host in the Host header; Go's transport would send the Service name as SNI, which
//     controllers that pick the certificate by SNI refuse (no default certificate, `unrecognized
//     name`) or answer 421 (SNI and Host differ). A client on the route's own DNS name sends the
//     same name in both: so does bench (servername.go).
//
// All three work by wrapping the VU's transport (lib.State.Transport, which k6's tracing transport calls
// for every attempt of a request), so the JavaScript hot path pays nothing per request.
package bench

import (
	"errors"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"
)

func init() {
	modules.Register("k6/x/bench", new(rootModule))
}

type rootModule struct{}

// NewModuleInstance runs in each VU's init context, where the metric registry is reachable.
func (*rootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	// The same metric the scripts define in scenarios/lib/metrics.js: the registry returns the
	// existing one when the name and type match.
	errorsMetric, err := vu.InitEnv().Registry.NewMetric("bench_errors", metrics.Counter)
	if err != nil {
		panic(err)
	}
	lag, err := newLagMetrics(vu.InitEnv().Registry)
	if err != nil {
		panic(err)
	}
	return &instance{vu: vu, errors: errorsMetric, lag: lag}
}

type instance struct {
	vu        modules.VU
	errors    *metrics.Metric
	lag       *lagMetrics
	transport *replayCounter
	// isLagVU's answer for the scenario state it was last asked about (lag.go)
	lastScenario *lib.ScenarioState
	lastIsLag    bool
}

// Exports: useConnections(keepAlive), matchServerName() and streamServerName(host) (servername.go),
// runtimeStats() (runtime.go), cpuThrottling() (cgroup.go), k6Version() (version.go), newTarget, request, probe (request.go), classify (classify.go), and lagSample, setLagPhases and
// lagIntervalMs (lag.go), sendRunEnd (runend.go).
func (m *instance) Exports() modules.Exports {
	return modules.Exports{Named: map[string]interface{}{
		"useConnections":   m.useConnections,
		"matchServerName":  m.matchServerName,
		"streamServerName": m.streamServerName,
		"runtimeStats":     m.runtimeStats,
		"cpuThrottling":    m.cpuThrottling,
		"newTarget":        m.newTarget,
		"request":          m.request,
		"probe":            m.probe,
		"classify":         classifyExport,
		"lagSample":        m.lagSample,
		"setLagPhases":     setLagPhases,
		"lagIntervalMs":    LagIntervalMs,
		"k6Version":        k6Version,
		"sendRunEnd":       m.sendRunEnd,
	}}
}

// useConnections(keepAlive) installs the replay counter on this VU's transport (once) and sets
// whether its connections are kept alive. Call it from a VU (not the init context) whenever the
// mode may change; it costs a map-free field write.
func (m *instance) useConnections(keepAlive bool) error {
	if err := m.wrapTransport("bench.useConnections"); err != nil {
		return err
	}
	markLoadStart()
	m.transport.setKeepAlive(keepAlive)
	return nil
}

// matchServerName() wraps this VU's transport as useConnections does, without touching keep-alive
// or the load's start: requests through k6's http module (setup's target check, the route
// experiments' probes) then send their Host header's name as TLS SNI too.
func (m *instance) matchServerName() error {
	return m.wrapTransport("bench.matchServerName")
}

func (m *instance) wrapTransport(caller string) error {
	state := m.vu.State()
	if state == nil {
		return errors.New(caller + " must be called from a VU, not the init context")
	}
	if m.transport == nil {
		inner, ok := state.Transport.(*http.Transport)
		if !ok {
			return errors.New(caller + ": the VU transport is not an *http.Transport")
		}
		m.transport = &replayCounter{inner: inner, instance: m}
		state.Transport = m.transport
	}
	return nil
}

// replayCounter counts the connections each request attempt took: more than one means the
// transport replayed the request after a connection failure. It sends each request through the
// transport for its TLS server name (servername.go).
type replayCounter struct {
	inner    *http.Transport
	instance *instance
	names    serverNames
}

func (r *replayCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	var attempts int32
	countConn := func(httptrace.GotConnInfo) { atomic.AddInt32(&attempts, 1) }
	if trace := httptrace.ContextClientTrace(req.Context()); trace != nil {
		// k6's tracing transport gives every request a trace of its own: chain onto its GotConn in
		// place. httptrace.WithClientTrace would compose the two by reflection on every request
		// (about 3% of a request's CPU).
		k6GotConn := trace.GotConn
		trace.GotConn = func(info httptrace.GotConnInfo) {
			countConn(info)
			if k6GotConn != nil {
				k6GotConn(info)
			}
		}
	} else {
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: countConn}))
	}
	resp, err := r.transportFor(req).RoundTrip(req)
	if n := atomic.LoadInt32(&attempts); n > 1 {
		r.instance.countError("read", "replayed", float64(n-1))
	}
	return resp, err
}

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
//
// Both work by wrapping the VU's transport (lib.State.Transport, which k6's tracing transport calls
// for every attempt of a request), so the JavaScript hot path pays nothing per request.
package bench

import (
	"errors"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"go.k6.io/k6/js/modules"
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
	return &instance{vu: vu, errors: errorsMetric}
}

type instance struct {
	vu        modules.VU
	errors    *metrics.Metric
	transport *replayCounter
}

// Exports: useConnections(keepAlive), runtimeStats() (runtime.go) and cpuThrottling() (cgroup.go).
func (m *instance) Exports() modules.Exports {
	return modules.Exports{Named: map[string]interface{}{
		"useConnections": m.useConnections,
		"runtimeStats":   m.runtimeStats,
		"cpuThrottling":  m.cpuThrottling,
	}}
}

// useConnections(keepAlive) installs the replay counter on this VU's transport (once) and sets
// whether its connections are kept alive. Call it from a VU (not the init context) whenever the
// mode may change; it costs a map-free field write.
func (m *instance) useConnections(keepAlive bool) error {
	state := m.vu.State()
	if state == nil {
		return errors.New("bench.useConnections must be called from a VU, not the init context")
	}
	markLoadStart()
	if m.transport == nil {
		inner, ok := state.Transport.(*http.Transport)
		if !ok {
			return errors.New("bench.useConnections: the VU transport is not an *http.Transport")
		}
		m.transport = &replayCounter{inner: inner, instance: m}
		state.Transport = m.transport
	}
	disable := !keepAlive
	if m.transport.inner.DisableKeepAlives != disable {
		m.transport.inner.DisableKeepAlives = disable
		m.transport.inner.CloseIdleConnections()
	}
	return nil
}

// replayCounter counts the connections each request attempt took: more than one means the
// transport replayed the request after a connection failure.
type replayCounter struct {
	inner    *http.Transport
	instance *instance
}

func (r *replayCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	var attempts int32
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { atomic.AddInt32(&attempts, 1) }}
	// WithClientTrace composes with k6's own trace already in the context.
	resp, err := r.inner.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if n := atomic.LoadInt32(&attempts); n > 1 {
		r.instance.countReplays(float64(n - 1))
	}
	return resp, err
}

func (m *instance) countReplays(n float64) {
	state := m.vu.State()
	if state == nil {
		return
	}
	ctm := state.Tags.GetCurrentValues()
	// The VU's context, not the request's: a request that timed out still counts its replays.
	metrics.PushIfNotDone(m.vu.Context(), state.Samples, metrics.Sample{
		TimeSeries: metrics.TimeSeries{
			Metric: m.errors,
			Tags:   ctm.Tags.With("class", "read").With("cause", "replayed"),
		},
		Time:     time.Now(),
		Metadata: ctm.Metadata,
		Value:    n,
	})
}

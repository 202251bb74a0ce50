package bench

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/netext/httpext"
	"go.k6.io/k6/metrics"
)

// The load request, in Go: bench's hot path is one GET per iteration, and doing it through k6's
// JavaScript http module cost each request its params parsed from a JS object, a JS response
// object, and the failure classification read back from it through reflection. request() builds the
// same request k6's http.get builds (k6's own httpext.MakeRequest sends it: the same transport,
// timings, tags and built-in metrics), classifies a failure here and adds it to bench_errors, and
// hands JavaScript only the status.

// Target is one prepared request (newTarget): built once per VU, sent many times.
type Target struct {
	url       httpext.URL
	host      string
	header    http.Header
	timeout   time.Duration
	keepAlive bool
	tls       bool
}

// newTarget(url, host, timeoutMs, keepAlive) -> a Target for request(). host "" keeps the URL's.
func (m *instance) newTarget(rawURL, host string, timeoutMs float64, keepAlive bool) (*Target, error) {
	u, err := httpext.NewURL(rawURL, rawURL)
	if err != nil {
		return nil, fmt.Errorf("bench.newTarget: invalid URL %q: %w", rawURL, err)
	}
	if !(timeoutMs > 0) {
		return nil, fmt.Errorf("bench.newTarget: invalid timeout %v ms", timeoutMs)
	}
	header := make(http.Header)
	if host != "" {
		header.Set("Host", host)
	}
	return &Target{
		url:       u,
		host:      host,
		header:    header,
		timeout:   time.Duration(timeoutMs * float64(time.Millisecond)),
		keepAlive: keepAlive,
		tls:       strings.EqualFold(u.GetURL().Scheme, "https"),
	}, nil
}

// expectedStatus is k6's default response callback (http.expectedStatuses({min: 200, max: 399})):
// what http_req_failed counts as a success.
func expectedStatus(status int) bool { return status >= 200 && status <= 399 }

// request(target) sends one GET as k6's http.get(url, {headers, timeout}) would, counts a failure
// in bench_errors{class, cause} and returns the status (0 when no response came). A VU of the
// runner_lag scenario runs the same `load` function: it takes one lag sample instead (lag.go) and
// returns null.
func (m *instance) request(t *Target) (interface{}, error) {
	state := m.vu.State()
	if state == nil {
		return 0, errors.New("bench.request must be called from a VU, not the init context")
	}
	if m.isLagVU(state) {
		return nil, m.lagSample()
	}
	if t == nil {
		return 0, errors.New("bench.request: no target (bench.newTarget)")
	}
	if err := m.useConnections(t.keepAlive); err != nil {
		return 0, err
	}
	preq := parsedRequest(state, t, state.Options.UserAgent.String)
	resp, err := httpext.MakeRequest(m.vu.Context(), state, preq)
	if err != nil {
		return 0, err
	}
	if resp.ErrorCode != 0 {
		written := resp.Timings.Sending > 0 || resp.Timings.Waiting > 0
		if c := classify(resp.Status, resp.ErrorCode, resp.Error, written, t.tls); c != nil {
			m.countError(c.class, c.cause, 1)
		}
	}
	return resp.Status, nil
}

// parsedRequest(state, t, userAgent): the GET k6's http.get(url, {headers, timeout}) would build
// for t, with the run's redirects, cookies, tags and body handling.
func parsedRequest(state *lib.State, t *Target, userAgent string) *httpext.ParsedHTTPRequest {
	u := *t.url.GetURL()
	header := t.header.Clone()
	header.Set("User-Agent", userAgent)
	preq := &httpext.ParsedHTTPRequest{
		URL:              &t.url,
		Req:              &http.Request{Method: http.MethodGet, URL: &u, Header: header, Host: t.host},
		Timeout:          t.timeout,
		Throw:            state.Options.Throw.Bool,
		Redirects:        state.Options.MaxRedirects,
		Cookies:          make(map[string]*httpext.HTTPRequestCookie),
		ResponseCallback: expectedStatus,
		TagsAndMeta:      state.Tags.GetCurrentValues(),
		ResponseType:     httpext.ResponseTypeText,
	}
	if state.Options.DiscardResponseBodies.Bool {
		preq.ResponseType = httpext.ResponseTypeNone
	}
	if state.CookieJar != nil {
		preq.ActiveJar = state.CookieJar
		httpext.SetRequestCookies(preq.Req, preq.ActiveJar, preq.Cookies)
	}
	return preq
}

// probeUserAgent marks the churn VU's probes in a backend's or controller's access log.
const probeUserAgent = "bench-probe"

// podHeader names the backend pod that served a response (the backend sets it on every response).
const podHeader = "X-Bench-Pod"

// probe(target, n): the churn VU's convergence probe (scenarios/lib/churn.js). Sends n GETs at once,
// as k6's http.batch would (the run's batch limits), each on a new connection when the target is not
// kept alive, and returns the pod that served each one, from its X-Bench-Pod header ("" where no
// response came). They are k6 requests like the load's, tagged with the churn scenario's tags
// (role=churn); a probe that fails is not a bench_errors failure. In Go so that a churn run's VUs,
// any of which may become the churn VU, need not load k6's http module for it.
func (m *instance) probe(t *Target, n int) ([]string, error) {
	state := m.vu.State()
	if state == nil {
		return nil, errors.New("bench.probe must be called from a VU, not the init context")
	}
	if t == nil || n < 1 {
		return nil, fmt.Errorf("bench.probe: needs a target (bench.newTarget) and a count of at least 1, got %d", n)
	}
	if err := m.useConnections(t.keepAlive); err != nil {
		return nil, err
	}
	reqs := make([]httpext.BatchParsedHTTPRequest, n)
	for i := range reqs {
		reqs[i] = httpext.BatchParsedHTTPRequest{
			ParsedHTTPRequest: parsedRequest(state, t, probeUserAgent),
			Response:          new(httpext.Response),
		}
	}
	done := httpext.MakeBatchRequests(m.vu.Context(), state, reqs, n,
		int(state.Options.Batch.Int64), int(state.Options.BatchPerHost.Int64))
	var firstErr error
	for range reqs {
		if err := <-done; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	pods := make([]string, n)
	for i, r := range reqs {
		if r.Response.Status > 0 {
			pods[i] = r.Response.Headers[podHeader]
		}
	}
	return pods, nil
}

// countError adds n to bench_errors{class, cause} with the VU's current tags.
func (m *instance) countError(class, cause string, n float64) {
	state := m.vu.State()
	if state == nil {
		return
	}
	ctm := state.Tags.GetCurrentValues()
	// The VU's context, not the request's: a request that timed out still counts.
	metrics.PushIfNotDone(m.vu.Context(), state.Samples, metrics.Sample{
		TimeSeries: metrics.TimeSeries{
			Metric: m.errors,
			Tags:   ctm.Tags.With("class", class).With("cause", cause),
		},
		Time:     time.Now(),
		Metadata: ctm.Metadata,
		Value:    n,
	})
}

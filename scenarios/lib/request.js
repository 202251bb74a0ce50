// One request: the hot path every load VU runs, and all a load VU of a steady experiment loads
// besides the configuration (run-config.js). The request itself runs in Go (k6/x/bench request: k6's
// own request engine, the same transport, timings, tags and built-in metrics as http.get), which
// also classes a failure into bench_errors (the classes: errors.js), so a request costs JavaScript
// one call and no response object (scenarios/calibrate/README.md, "Overhead budget"). The options, setup
// and summary code (load.js, summary.js) is loaded in VU 0 only, since every function a module keeps
// reachable costs each VU about 0.75 KB (scenarios/calibrate/README.md, "Memory per VU"). The lag
// sampler is Go too (lag.js): a VU of the runner_lag scenario runs `load` like any other, and
// bench.request takes a lag sample there instead of a request.
'use strict';
const bench = require('k6/x/bench');

// k6 duration string for options ("1500ms").
function k6Duration(ms) {
  return `${Math.round(ms)}ms`;
}

// target(cfg, baseUrl, path, keepalive, host): everything one request needs, built once per VU: the
// URL and params for k6's http module (setup's check, the churn's probes) and the same request
// prepared in Go for hit(). host: the Host header (default BENCH_TARGET_HOST; none: the URL's).
// keepalive false: a new connection for every request (ab without -k), whatever the server does:
// the VU's transport stops reusing connections and sends `Connection: close` itself.
function target(cfg, baseUrl, path, keepalive, host) {
  const hostHeader = host || cfg.targetHost || '';
  const headers = {};
  if (hostHeader) headers.Host = hostHeader;
  return {
    url: baseUrl + path,
    keepalive,
    params: { headers, timeout: k6Duration(cfg.timeoutMs) },
    prepared: bench.newTarget(baseUrl + path, hostHeader, cfg.timeoutMs, keepalive),
  };
}

// hit(t): one GET; a failure is counted in bench_errors by class and cause, and a request the
// transport replayed as a read error (k6/x/bench). Returns the response status (0: no response).
// A VU of the runner_lag scenario (lag.js) runs the same exported `load` function: bench.request
// samples the runner's lag there instead and returns null; scripts that pick the request by scenario
// name (keepalive.js, paths.js) have none for that scenario, so t may be undefined there.
function hit(t) {
  return bench.request(t === undefined ? null : t.prepared);
}

// matchServerName(): this VU's TLS handshakes name the host of each request's Host header, as
// hit() and the churn's probes always do, for requests sent through k6's http module (setup's
// target check, the route experiments' probes). Controllers that choose the certificate by server
// name refuse a Service name (k6/x/bench servername.go).
function matchServerName() {
  bench.matchServerName();
}

// streamServerName(host): this VU's WebSocket and gRPC connections send host as TLS SNI, as its
// http requests do through matchServerName (k6/x/bench servername.go; neither module takes a
// server name). Without it a controller that chooses the certificate by SNI refuses their handshake.
function streamServerName(host) {
  bench.streamServerName(host || '');
}

// loadOnly(t): {load} for a load VU, hitting t. A closure keeps its whole enclosing scope alive, so
// load() is made here, where the scope holds the request only: made in an experiment function, whose
// setup() refers to cfg, it would keep each VU's parsed copy of the configuration (about 5 KB).
function loadOnly(t) {
  return {
    load() {
      hit(t);
    },
  };
}

module.exports = {
  k6Duration,
  target,
  hit,
  matchServerName,
  streamServerName,
  loadOnly,
};

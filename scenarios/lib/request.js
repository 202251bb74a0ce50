// One request: the hot path every load VU runs, and all a load VU of a steady or churn experiment
// loads besides the error classes (errors.js) and the lag sampler (lag.js). The options, setup and
// summary code (load.js, summary.js) is loaded in VU 0 only, since every function a module keeps
// reachable costs each VU about 0.75 KB (ci/calibrate/README.md, "Memory per VU").
import http from 'k6/http';
import bench from 'k6/x/bench';
import { countError } from './errors.js';
import { isLagVu, runLag } from './lag.js';

// k6 duration string for options ("1500ms").
export function k6Duration(ms) {
  return `${Math.round(ms)}ms`;
}

// target(cfg, baseUrl, path, keepalive): everything one request needs, built once per VU.
// keepalive false: a new connection for every request (ab without -k), whatever the server does:
// the VU's transport stops reusing connections and sends `Connection: close` itself.
export function target(cfg, baseUrl, path, keepalive) {
  const headers = {};
  if (cfg.targetHost) headers.Host = cfg.targetHost;
  return {
    url: baseUrl + path,
    keepalive,
    params: { headers, timeout: k6Duration(cfg.timeoutMs) },
  };
}

// useTargetConnections(t): puts this VU's transport in t's keep-alive mode when it is not already
// (k6/x/bench, which also counts requests the transport replayed: errors.js). One comparison per
// request; a VU's module state is its own.
let vuKeepAlive = null;
function useTargetConnections(t) {
  if (t.keepalive === vuKeepAlive) return;
  bench.useConnections(t.keepalive);
  vuKeepAlive = t.keepalive;
}

// hit(t): one request; a failure is classified into bench_errors. Returns the response.
// A VU of the runner_lag scenario (lag.js) runs the same exported `load` function: it samples the
// runner's lag instead and returns null (one property read on the hot path).
export function hit(t) {
  if (isLagVu(__ENV)) {
    runLag();
    return null;
  }
  useTargetConnections(t);
  const res = http.get(t.url, t.params);
  countError(res);
  return res;
}

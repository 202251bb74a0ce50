// tls-handshakes: TLS handshakes per second. HTTPS with a new connection for every request.
// Reproduces: the published TLS test: an empty (0-byte) response over HTTPS, no keep-alive, so each
//   request costs a full TLS handshake (k6 keeps no TLS session cache: no resumption).
// Load: as static.js on BENCH_TARGET_URL, which must be https://, path BENCH_PATH (default here
//   /bytes/0), `Connection: close` on every request (BENCH_KEEPALIVE is not used).
// Churn: none.
// Warm-up: BENCH_WARMUP, as static.js (its handshakes are left out too).
// Thresholds: no dropped iterations.
// Summary: requests.rate_achieved is the handshake rate; tls_handshake_ms has the handshake times.
import { runConfig } from './lib/run-config.js';
import { target, loadOnly } from './lib/request.js';
import { customExperiment } from './lib/experiment.js';

const cfg = runConfig(__ENV, { BENCH_PATH: '/bytes/0' });
if (!cfg.targetUrl.startsWith('https://')) {
  throw new Error(`invalid BENCH_TARGET_URL=${JSON.stringify(cfg.targetUrl)}: tls-handshakes needs an https:// URL`);
}
const request = target(cfg, cfg.targetUrl, cfg.path, false);
const HANDSHAKE = 'http_req_tls_handshaking{role:load}';

const experiment = customExperiment(loadOnly(request), (lib) => {
  const report = lib.singleTargetReport('tls-handshakes', cfg, {
    keepalive: false,
    extend(data, summary) {
      const m = data.metrics[HANDSHAKE];
      summary.tls_handshake_ms = lib.latencyFrom(m && m.values);
    },
  });
  return {
    scenarios: lib.measuredLoad(cfg, 'load'),
    report,
    thresholds: Object.assign(lib.noDroppedIterations(cfg), { [HANDSHAKE]: ['max>=0'] }),
    targets: [[request, 'BENCH_TARGET_URL + BENCH_PATH']],
  };
});

export const options = experiment.options;
export const setup = experiment.setup;
export const load = experiment.load;
export const handleSummary = experiment.handleSummary;

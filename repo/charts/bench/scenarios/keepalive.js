// keepalive: what new connections cost. The same rate with and without client keep-alive.
// Reproduces: ab with -k against ab without -k (every request on a new TCP connection, and a new TLS
//   handshake on https targets).
// Load: two constant-arrival-rate scenarios, one after the other, each BENCH_RATE req/s for
//   BENCH_DURATION: "keep-alive" (connections reused) then "close" (`Connection: close` on every
//   request). BENCH_KEEPALIVE is not used: both variants always run.
// Churn: none.
// Thresholds: no dropped iterations.
// Summary: by_path has the two variants, "keep-alive" and "close"; settings.keepalive is null (both).
import { runConfig } from './lib/run-config.js';
import { target } from './lib/request.js';
import { loadByScenario } from './lib/scenario-load.js';
import { customExperiment } from './lib/experiment.js';

const cfg = runConfig(__ENV);
const VARIANTS = [
  { name: 'keep-alive', scenario: 'keepalive_on', keepalive: true },
  { name: 'close', scenario: 'keepalive_off', keepalive: false },
];
const requests = {};
for (const v of VARIANTS) requests[v.scenario] = target(cfg, cfg.targetUrl, cfg.path, v.keepalive);

const experiment = customExperiment(loadByScenario(requests), (lib) => {
  const scenarios = {};
  VARIANTS.forEach((v, i) => {
    scenarios[v.scenario] = lib.loadScenario(cfg, {
      exec: 'load', rate: cfg.rate, durationMs: cfg.durationMs, startMs: i * (cfg.durationMs + lib.gapMs(cfg)),
    });
  });
  const report = lib.singleTargetReport('keepalive', cfg, {
    keepalive: null,
    durationMs: VARIANTS.length * cfg.durationMs,
    parts: VARIANTS.map((v) => ({ name: v.name, scenario: v.scenario, rateTarget: cfg.rate, durationMs: cfg.durationMs })),
  });
  return {
    scenarios,
    report,
    thresholds: { dropped_iterations: ['count==0'] },
    targets: [[requests.keepalive_on, 'BENCH_TARGET_URL + BENCH_PATH']],
  };
});

export const options = experiment.options;
export const setup = experiment.setup;
export const load = experiment.load;
export const handleSummary = experiment.handleSummary;

// keepalive: what new connections cost. The same rate with and without client keep-alive.
// Reproduces: ab with -k against ab without -k (every request on a new TCP connection, and a new TLS
//   handshake on https targets).
// Load: two constant-arrival-rate scenarios, one after the other, each BENCH_RATE req/s for
//   BENCH_DURATION: "keep-alive" (connections reused) then "close" (`Connection: close` on every
//   request). BENCH_KEEPALIVE is not used: both variants always run.
// Churn: none.
// Thresholds: no dropped iterations.
// Summary: by_path has the two variants, "keep-alive" and "close"; settings.keepalive is null (both).
import exec from 'k6/execution';
import { runConfig } from './lib/run-config.js';
import { target, hit, loadScenario, baseOptions, checkTarget, gapMs } from './lib/load.js';
import { summaryThresholds, singleTargetReport, makeHandleSummary } from './lib/summary.js';

const cfg = runConfig(__ENV);
const VARIANTS = [
  { name: 'keep-alive', scenario: 'keepalive_on', keepalive: true },
  { name: 'close', scenario: 'keepalive_off', keepalive: false },
];

const scenarios = {};
const requests = {};
VARIANTS.forEach((v, i) => {
  scenarios[v.scenario] = loadScenario(cfg, {
    exec: 'load', rate: cfg.rate, durationMs: cfg.durationMs, startMs: i * (cfg.durationMs + gapMs(cfg)),
  });
  requests[v.scenario] = target(cfg, cfg.targetUrl, cfg.path, v.keepalive);
});

const report = singleTargetReport('keepalive', cfg, {
  keepalive: null,
  durationMs: VARIANTS.length * cfg.durationMs,
  parts: VARIANTS.map((v) => ({ name: v.name, scenario: v.scenario, rateTarget: cfg.rate, durationMs: cfg.durationMs })),
});

export const options = baseOptions(report, scenarios,
  summaryThresholds(report, { dropped_iterations: ['count==0'] }));

export function setup() {
  checkTarget(requests.keepalive_on, 'BENCH_TARGET_URL + BENCH_PATH');
}

export function load() {
  hit(requests[exec.scenario.name]);
}

export const handleSummary = makeHandleSummary(report);

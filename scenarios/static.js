// static: the published steady-state test. A constant rate through one path, nothing moving.
// Reproduces: wrk -t2 -c1000 -d180s -R30000 against the ingress (open model, like wrk2).
// Load: BENCH_RATE req/s for BENCH_DURATION (constant-arrival-rate), BENCH_CONNECTIONS pre-allocated
//   VUs as the connection budget, keep-alive (BENCH_KEEPALIVE), BENCH_TIMEOUT per request.
// Churn: none.
// Thresholds: no dropped iterations. If k6 could not hold the rate the run fails (exit 99) and the
//   summary says so: its latency would not be the latency at the target rate.
import { loadConfig } from './lib/config.js';
import { target, hit, loadScenario, baseOptions, checkTarget } from './lib/load.js';
import { summaryThresholds, singleTargetReport, makeHandleSummary } from './lib/summary.js';

const cfg = loadConfig(__ENV);
const request = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);
const report = singleTargetReport('static', cfg);

export const options = baseOptions(cfg,
  { load: loadScenario(cfg, { exec: 'load', rate: cfg.rate, durationMs: cfg.durationMs }) },
  summaryThresholds(report, { dropped_iterations: ['count==0'] }));

export function setup() {
  checkTarget(request, 'BENCH_TARGET_URL + BENCH_PATH');
}

export function load() {
  hit(request);
}

export const handleSummary = makeHandleSummary(report);

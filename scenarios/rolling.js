// rolling: a rolling restart of the backend under constant load.
// Reproduces: `kubectl rollout restart deployment/bench-backend` every BENCH_ROLL_INTERVAL while the
//   load runs: every pod is replaced, so the controller must follow a full endpoint turnover.
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: one 1-VU scenario sets the pod-template annotation kubectl.kubernetes.io/restartedAt on
//   BENCH_DEPLOYMENT (first after one interval), measuring convergence and replicas like dynamic.js.
// Thresholds: no dropped iterations.
import { loadConfig } from './lib/config.js';
import { target, hit, loadScenario, baseOptions, checkTarget } from './lib/load.js';
import { churnScenario, rolloutPlan, runChurn, checkApi } from './lib/churn.js';
import { summaryThresholds, singleTargetReport, makeHandleSummary } from './lib/summary.js';

const cfg = loadConfig(__ENV);
const request = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);
const probe = target(cfg, cfg.targetUrl, '/healthz', false);
const report = singleTargetReport('rolling', cfg);

export const options = baseOptions(cfg,
  {
    load: loadScenario(cfg, { exec: 'load', rate: cfg.rate, durationMs: cfg.durationMs }),
    churn: churnScenario(cfg),
  },
  summaryThresholds(report, { 'dropped_iterations{role:load}': ['count==0'] }));

export function setup() {
  checkTarget(request, 'BENCH_TARGET_URL + BENCH_PATH');
  return checkApi(cfg);
}

export function load() {
  hit(request);
}

export function churn() {
  runChurn(cfg, rolloutPlan(cfg), probe);
}

export const handleSummary = makeHandleSummary(report);

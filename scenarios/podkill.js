// podkill: backend pods die under constant load.
// Reproduces: deleting one backend pod every BENCH_PODKILL_INTERVAL (chaos-style), the Deployment
//   replaces it; the controller must stop sending to the dying pod and pick up the new one.
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: one 1-VU scenario deletes a random Ready pod matching BENCH_POD_SELECTOR in
//   BENCH_NAMESPACE (first after one interval), measuring convergence and replicas like dynamic.js.
// Thresholds: no dropped iterations.
import { loadConfig } from './lib/config.js';
import { target, hit, loadScenario, baseOptions, checkTarget } from './lib/load.js';
import { churnScenario, podkillPlan, runChurn, checkApi } from './lib/churn.js';
import { summaryThresholds, singleTargetReport, makeHandleSummary } from './lib/summary.js';

const cfg = loadConfig(__ENV);
const request = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);
const probe = target(cfg, cfg.targetUrl, '/healthz', false);
const report = singleTargetReport('podkill', cfg);

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
  runChurn(cfg, podkillPlan(cfg), probe);
}

export const handleSummary = makeHandleSummary(report);

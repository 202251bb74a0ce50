// throughput: bytes per second with large bodies.
// Reproduces: the published throughput test: 1 MB responses through the path, reported as bytes/s.
// Load: as static.js, on BENCH_PATH (default here /bytes/1m). Size BENCH_RATE to the link: 1000
//   req/s of 1 MiB is 8 Gbit/s.
// Churn: none.
// Thresholds: no dropped iterations.
// Summary: throughput.bytes_received_per_s is the result; the latency is the full-body time.
import { loadConfig } from './lib/config.js';
import { target, hit, loadScenario, baseOptions, checkTarget } from './lib/load.js';
import { summaryThresholds, singleTargetReport, makeHandleSummary } from './lib/summary.js';

const cfg = loadConfig(__ENV, { BENCH_PATH: '/bytes/1m' });
const request = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);
const report = singleTargetReport('throughput', cfg);

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

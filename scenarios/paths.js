// paths: the published path comparison. The same load through each way into the backend, in one run.
// Reproduces: the path test (ingress vs ClusterIP Service vs NodePort vs straight to the pod) with
//   4 KB and 100 KB bodies.
// Load: one constant-arrival-rate scenario per path and body, one after the other (so paths never
//   compete for the backend or the generator), each BENCH_RATE req/s for BENCH_DURATION; tagged
//   path=<ingress|clusterip|nodeport|pod>. Paths come from BENCH_URL_INGRESS, BENCH_URL_CLUSTERIP,
//   BENCH_URL_NODEPORT and BENCH_URL_POD (set at least one; unset ones are skipped). Bodies:
//   /bytes/4k and /bytes/100k, or only BENCH_PATH when it is set.
// Churn: none.
// Thresholds: no dropped iterations.
// Summary: by_path has one entry per path and body, keyed "<path>-<body>" (e.g. "ingress-4k").
import exec from 'k6/execution';
import { runConfig } from './lib/run-config.js';
import { target, hit, loadScenario, baseOptions, checkTarget, gapMs } from './lib/load.js';
import { summaryThresholds, singleTargetReport, makeHandleSummary } from './lib/summary.js';

const cfg = runConfig(__ENV, { BENCH_PATH: '/bytes/4k' });
const BODIES = __ENV.BENCH_PATH ? [cfg.path] : ['/bytes/4k', '/bytes/100k'];

const pathNames = Object.keys(cfg.pathUrls);
if (pathNames.length === 0) {
  throw new Error('paths needs at least one of BENCH_URL_INGRESS, BENCH_URL_CLUSTERIP, BENCH_URL_NODEPORT, '
    + 'BENCH_URL_POD (base URLs such as http://bench-backend.bench.svc)');
}

const parts = [];
const scenarios = {};
const requests = {};
for (const pathName of pathNames) {
  for (const body of BODIES) {
    const bodyName = body.replace(/^.*\//, '') || 'root';
    const scenario = `${pathName}_${bodyName}`.replace(/[^A-Za-z0-9_]/g, '_');
    scenarios[scenario] = loadScenario(cfg, {
      exec: 'load', rate: cfg.rate, durationMs: cfg.durationMs,
      startMs: parts.length * (cfg.durationMs + gapMs(cfg)), tags: { path: pathName },
    });
    requests[scenario] = target(cfg, cfg.pathUrls[pathName], body, cfg.keepalive);
    parts.push({ name: `${pathName}-${bodyName}`, scenario, rateTarget: cfg.rate, durationMs: cfg.durationMs });
  }
}

const report = singleTargetReport('paths', cfg, {
  targetUrl: cfg.pathUrls.ingress || cfg.pathUrls[pathNames[0]],
  path: BODIES.join(','),
  durationMs: parts.length * cfg.durationMs,
  parts,
});

export const options = baseOptions(report, scenarios,
  summaryThresholds(report, { dropped_iterations: ['count==0'] }));

export function setup() {
  for (const p of parts) checkTarget(requests[p.scenario], `path ${p.name}`);
}

export function load() {
  hit(requests[exec.scenario.name]);
}

export const handleSummary = makeHandleSummary(report);

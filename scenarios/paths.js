// paths: the published path comparison. The same load through each way into the backend, in one run.
// Reproduces: the path test (ingress vs ClusterIP Service vs NodePort vs straight to the pod) with
//   4 KB and 100 KB bodies.
// Load: one constant-arrival-rate scenario per path and body, one after the other (so paths never
//   compete for the backend or the generator), each BENCH_RATE req/s for BENCH_DURATION; tagged
//   path=<ingress|clusterip|nodeport|pod|gateway>. Paths come from BENCH_URL_INGRESS, BENCH_URL_CLUSTERIP,
//   BENCH_URL_NODEPORT, BENCH_URL_POD and BENCH_URL_GATEWAY (set at least one; unset ones are skipped:
//   the chart sets no ingress URL for a Gateway API controller, whose path is the gateway). Bodies:
//   /bytes/4k and /bytes/100k, or only BENCH_PATH when it is set.
// Churn: none.
// Thresholds: no dropped iterations.
// Summary: by_path has one entry per path and body, keyed "<path>-<body>" (e.g. "ingress-4k").
import { runConfig } from './lib/run-config.js';
import { target } from './lib/request.js';
import { loadByScenario } from './lib/scenario-load.js';
import { customExperiment } from './lib/experiment.js';

const cfg = runConfig(__ENV, { BENCH_PATH: '/bytes/4k' });
const BODIES = __ENV.BENCH_PATH ? [cfg.path] : ['/bytes/4k', '/bytes/100k'];

const pathNames = Object.keys(cfg.pathUrls);
if (pathNames.length === 0) {
  throw new Error('paths needs at least one of BENCH_URL_INGRESS, BENCH_URL_CLUSTERIP, BENCH_URL_NODEPORT, '
    + 'BENCH_URL_POD (base URLs such as http://bench-backend.bench.svc)');
}

// scenarioName(text): text with every character k6 refuses in a scenario name made '_'. Without a
// regex: the first one a VU evaluates costs it about 15 KB (scenarios/calibrate/README.md, "Memory per VU").
function scenarioName(text) {
  let name = '';
  for (const c of text) name += (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
  return name;
}

// One part per path and body, one after the other: {name, scenario, path}.
const parts = [];
const requests = {};
for (const pathName of pathNames) {
  for (const body of BODIES) {
    const bodyName = body.slice(body.lastIndexOf('/') + 1) || 'root';
    const scenario = scenarioName(`${pathName}_${bodyName}`);
    requests[scenario] = target(cfg, cfg.pathUrls[pathName], body, cfg.keepalive);
    parts.push({ name: `${pathName}-${bodyName}`, scenario, path: pathName });
  }
}

const experiment = customExperiment(loadByScenario(requests), (lib) => {
  const scenarios = {};
  parts.forEach((p, i) => {
    scenarios[p.scenario] = lib.loadScenario(cfg, {
      exec: 'load', rate: cfg.rate, durationMs: cfg.durationMs,
      startMs: i * (cfg.durationMs + lib.gapMs(cfg)), tags: { path: p.path },
    });
  });
  const report = lib.singleTargetReport('paths', cfg, {
    targetUrl: cfg.pathUrls.ingress || cfg.pathUrls.gateway || cfg.pathUrls[pathNames[0]],
    path: BODIES.join(','),
    durationMs: parts.length * cfg.durationMs,
    parts: parts.map((p) => ({ name: p.name, scenario: p.scenario, rateTarget: cfg.rate, durationMs: cfg.durationMs })),
  });
  return {
    scenarios,
    report,
    thresholds: { dropped_iterations: ['count==0'] },
    targets: parts.map((p) => [requests[p.scenario], `path ${p.name}`]),
  };
});

export const options = experiment.options;
export const setup = experiment.setup;
export const load = experiment.load;
export const handleSummary = experiment.handleSummary;

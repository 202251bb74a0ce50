// What the k6 modules hold of the facts scenarios/contract.json states, read from the modules
// themselves in a real k6 (the scripts keep literal copies: a VU must not parse the contract).
// ci/test/contract.py compares this output with the contract.
// Usage: k6 run --quiet scenarios/tests/contract-dump.js > dump.json (one JSON object on stdout).
import { DEFAULTS, loadConfig } from '../lib/config.js';
import { ERROR_CAUSES, ERROR_CLASSES } from '../lib/errors.js';
import * as metrics from '../lib/metrics.js';
import * as churnMetrics from '../lib/churn-metrics.js';
import * as routeMetrics from '../lib/route-metrics.js';
import * as streamMetrics from '../lib/stream-metrics.js';
import * as runInfo from '../lib/run-info.js';
import { latencyFrom } from '../lib/summary-writer.js';
import { WARMUP } from '../lib/load.js';
import * as lag from '../lib/lag.js';
import { RATE_HELD_SHARE } from '../lib/verdicts.js';
import { RUNNER_MEMORY } from '../lib/memory-plan.js';

const contract = JSON.parse(open('../contract.json'));
// The k6 trend stats the contract names, each given a distinct value: latencyFrom must put value
// i + 1 under percentile i's summary key. Read once, in this one-VU test only.
const stats = contract.percentiles.list.map((p) => p.k6);

// loadConfig's answer to each example of each variable's type (contract variables.types), and to a
// count's max and max + 1: {name, value, accepted, message}. BENCH_CONNECTIONS is 1 so that
// BENCH_MAX_CONNECTIONS is judged on its own bounds, not against the default 100 connections.
function probeVariables() {
  const probes = [];
  for (const v of contract.variables.list) {
    const type = contract.variables.types[v.type] || { accepts: [], refuses: [] };
    const bounds = v.max === undefined ? [] : [String(v.max), String(v.max + 1)];
    for (const value of type.accepts.concat(type.refuses, bounds)) {
      const env = { BENCH_CONNECTIONS: '1' };
      env[v.name] = value;
      try {
        loadConfig(env);
        probes.push({ name: v.name, value, accepted: true, message: '' });
      } catch (e) {
        probes.push({ name: v.name, value, accepted: false, message: String(e.message) });
      }
    }
  }
  return probes;
}

export const options = { vus: 1, iterations: 1 };

// Every exported metric object of a module: [{name, module, exported}].
function metricObjects(module, path) {
  return Object.keys(module).filter((k) => module[k] && typeof module[k].add === 'function' && module[k].name)
    .map((k) => ({ name: module[k].name, module: path, exported: k }));
}
const defined = metricObjects(metrics, 'scenarios/lib/metrics.js')
  .concat(metricObjects(churnMetrics, 'scenarios/lib/churn-metrics.js'))
  .concat(metricObjects(routeMetrics, 'scenarios/lib/route-metrics.js'))
  .concat(metricObjects(streamMetrics, 'scenarios/lib/stream-metrics.js'))
  .concat(metricObjects(runInfo, 'scenarios/lib/run-info.js'));

// One sample each, so that handleSummary reports every metric's type and contents.
export default function () {
  for (const m of [metrics, churnMetrics, routeMetrics, streamMetrics, runInfo]) {
    for (const k of Object.keys(m)) if (m[k] && typeof m[k].add === 'function') m[k].add(0);
  }
}

export function handleSummary(data) {
  const values = { count: 1, min: 0, avg: 0, max: 0 };
  stats.forEach((s, i) => { values[s] = i + 1; });
  const dump = {
    variables: DEFAULTS,
    variableProbes: probeVariables(),
    warmup: WARMUP,
    runnerMemory: RUNNER_MEMORY,
    verdicts: {
      rateHeldShare: RATE_HELD_SHARE,
      runnerLag: Object.fromEntries(Object.keys(contract.verdicts.runnerLag).map((k) => [k, lag[k] === undefined ? null : lag[k]])),
    },
    errorCauses: ERROR_CAUSES,
    errorClasses: ERROR_CLASSES,
    latencyKeys: Object.keys(latencyFrom(null)),
    percentileProbe: { stats, latency: latencyFrom(values) },
    metrics: defined.map((m) => {
      const seen = data.metrics[m.name] || {};
      return Object.assign({ k6Type: seen.type || null, contains: seen.contains || null }, m);
    }),
  };
  return { stdout: `${JSON.stringify(dump)}\n` };
}

// What the k6 modules hold of the facts scenarios/contract.json states, read from the modules
// themselves in a real k6 (the scripts keep literal copies: a VU must not parse the contract).
// ci/test/contract.py compares this output with the contract.
// Usage: k6 run --quiet scenarios/tests/contract-dump.js > dump.json (one JSON object on stdout).
import { DEFAULTS } from '../lib/config.js';
import { ERROR_CAUSES, ERROR_CLASSES } from '../lib/errors.js';
import * as metrics from '../lib/metrics.js';
import * as routeMetrics from '../lib/route-metrics.js';
import { latencyFrom } from '../lib/summary-writer.js';

// The k6 trend stats the contract names, each given a distinct value: latencyFrom must put value
// i + 1 under percentile i's summary key. Read once, in this one-VU test only.
const stats = JSON.parse(open('../contract.json')).percentiles.list.map((p) => p.k6);

export const options = { vus: 1, iterations: 1 };

// Every exported metric object of a module: [{name, module, exported}].
function metricObjects(module, path) {
  return Object.keys(module).filter((k) => module[k] && typeof module[k].add === 'function' && module[k].name)
    .map((k) => ({ name: module[k].name, module: path, exported: k }));
}
const defined = metricObjects(metrics, 'scenarios/lib/metrics.js')
  .concat(metricObjects(routeMetrics, 'scenarios/lib/route-metrics.js'));

// One sample each, so that handleSummary reports every metric's type and contents.
export default function () {
  for (const m of [metrics, routeMetrics]) {
    for (const k of Object.keys(m)) if (m[k] && typeof m[k].add === 'function') m[k].add(0);
  }
}

export function handleSummary(data) {
  const values = { count: 1, min: 0, avg: 0, max: 0 };
  stats.forEach((s, i) => { values[s] = i + 1; });
  const dump = {
    variables: DEFAULTS,
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

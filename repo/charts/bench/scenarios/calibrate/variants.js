// Profiling aid: bare.js plus one or more of the things bench's load path does, switched on by
// CAL_FEATURES (comma-separated), to see what each costs per request (scenarios/calibrate/run.sh --profile).
//   params      per-request params as lib/load.js builds them: {headers: {}, timeout: '2000ms'}
//   tags        run tag testid and scenario tag role=load on every sample
//   classify    read res.status and res.error_code and classify them (lib/errors.js)
//   thresholds  the sub-metric thresholds lib/summary.js adds (role:load filters, 6 error classes)
//   trendstats  bench's summaryTrendStats (p99.9999 and friends)
//   lag         the runner-lag scenario (lib/lag.js) beside the load
import http from 'k6/http';
import { options as bareOptions } from './bare.js';
import { classifyError, ERROR_CLASSES } from '../lib/errors.js';
import { lagScenario, isLagVu, runLag } from '../lib/lag.js';

const features = new Set(String(__ENV.CAL_FEATURES || '').split(',').filter((f) => f));
const known = ['params', 'tags', 'classify', 'thresholds', 'trendstats', 'lag'];
for (const f of features) {
  if (!known.includes(f)) throw new Error(`invalid CAL_FEATURES item ${JSON.stringify(f)}: allowed are ${known.join(', ')}`);
}

const url = __ENV.CAL_URL;
const headers = __ENV.CAL_KEEPALIVE === 'false' ? { Connection: 'close' } : {};
const params = features.has('params') ? { headers, timeout: '2000ms' } : { headers };

// bare.js's load scenario, run through this script's `load`.
const scenario = Object.assign({}, bareOptions.scenarios.bare, { exec: 'load' });
if (features.has('tags')) scenario.tags = { role: 'load' };

const thresholds = {};
if (features.has('thresholds')) {
  thresholds['http_reqs{role:load}'] = ['count>=0'];
  thresholds['http_req_duration{role:load}'] = ['max>=0'];
  thresholds['data_received{role:load}'] = ['count>=0'];
  thresholds.dropped_iterations = ['count==0'];
  for (const c of ERROR_CLASSES) thresholds[`bench_errors{role:load,class:${c}}`] = ['count>=0'];
}

const scenarios = { load: scenario };
if (features.has('lag')) scenarios.lag = lagScenario(Number(__ENV.CAL_DURATION) * 1000);

export const options = {
  discardResponseBodies: true,
  insecureSkipTLSVerify: true,
  scenarios,
  thresholds,
  tags: features.has('tags') ? { testid: 'calibrate' } : {},
  summaryTrendStats: features.has('trendstats')
    ? ['min', 'avg', 'max', 'p(50)', 'p(90)', 'p(99)', 'p(99.9)', 'p(99.99)', 'p(99.999)', 'p(99.9999)', 'count']
    : undefined,
};

let classified = 0;
export function load() {
  if (isLagVu(__ENV)) {
    runLag();
    return;
  }
  const res = http.get(url, params);
  if (features.has('classify') && classifyError(res.status, res.error_code) !== null) classified++;
}

// Bare k6: the least a k6 script can do for bench's load model, the reference bench's scenarios are
// measured against. constant-arrival-rate (open model), CAL_CONNECTIONS pre-allocated VUs, one GET per
// iteration, bodies discarded, keep-alive unless CAL_KEEPALIVE=false. No tags, checks or custom metrics.
import http from 'k6/http';

const url = __ENV.CAL_URL;
const params = __ENV.CAL_KEEPALIVE === 'false' ? { headers: { Connection: 'close' } } : {};

export const options = {
  discardResponseBodies: true,
  insecureSkipTLSVerify: true,
  // End-of-test statistics only (nothing per request).
  summaryTrendStats: ['min', 'med', 'p(90)', 'p(99)', 'max', 'count'],
  scenarios: {
    bare: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.CAL_RATE),
      timeUnit: '1s',
      duration: `${Number(__ENV.CAL_DURATION)}s`,
      preAllocatedVUs: Number(__ENV.CAL_CONNECTIONS),
      maxVUs: Number(__ENV.CAL_CONNECTIONS),
    },
  },
};

export default function () {
  http.get(url, params);
}

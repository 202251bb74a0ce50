// rate-spike: BENCH_RATE req/s, 5x in the middle third of BENCH_DURATION, while the backend goes
// 5 -> 2 -> 5: a k6 executor's load shape, bench's churn and summary. Copy it into scenarios/.
import { experiment } from '../lib/churn-experiment.js';
const third = (cfg) => `${Math.round(cfg.durationMs / 3)}ms`;

export const { options, setup, load, churn, teardown, handleSummary } = experiment({
  name: 'rate-spike',
  defaults: { BENCH_RATE: '100', BENCH_DURATION: '30s' },
  load: (cfg) => ({
    executor: 'ramping-arrival-rate',
    startRate: cfg.rate,
    preAllocatedVUs: cfg.connections * 5, maxVUs: cfg.maxConnections * 5, // 5x the rate: 5x the connections
    stages: [
      { target: cfg.rate, duration: third(cfg) },
      { target: cfg.rate * 5, duration: '0s' }, // a jump: k6 ramps across a stage's duration
      { target: cfg.rate * 5, duration: third(cfg) },
      { target: cfg.rate, duration: '0s' },
      { target: cfg.rate, duration: third(cfg) },
    ],
  }),
  thresholds: { 'http_req_duration{scenario:load}': ['p(99)<500'] },
  textLine: (s) => `rate-spike: p99 ${s.latency_ms.p99} ms through a 5x spike (limit 500 ms)`,
  churn: (k8s, t) => {
    t.scale(5);
    t.hold(third(t.cfg));
    t.scale(2);
    t.hold(third(t.cfg));
    t.scale(5);
  },
});

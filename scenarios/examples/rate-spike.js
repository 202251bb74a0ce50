// rate-spike: BENCH_RATE req/s, five times that in the middle third of BENCH_DURATION, while the
// backend goes 5 -> 2 -> 5. The load is k6's own ramping-arrival-rate executor; bench adds its
// churn, error classes, metrics, summary and dashboards. Copy it into scenarios/ for the chart.
import { experiment } from '../lib/churn-experiment.js';

const third = (cfg) => `${Math.round(cfg.durationMs / 3)}ms`;

export const { options, setup, load, churn, teardown, handleSummary } = experiment({
  name: 'rate-spike',
  defaults: { BENCH_RATE: '100', BENCH_DURATION: '30s' },
  load: (cfg) => ({
    executor: 'ramping-arrival-rate',
    startRate: cfg.rate,
    maxVUs: cfg.maxConnections * 5, // five times the rate, five times the connections in flight
    stages: [
      { target: cfg.rate, duration: third(cfg) },
      { target: cfg.rate * 5, duration: '0s' }, // a jump: k6 ramps across a stage's duration
      { target: cfg.rate * 5, duration: third(cfg) },
      { target: cfg.rate, duration: '0s' },
      { target: cfg.rate, duration: third(cfg) },
    ],
  }),
  thresholds: { 'http_req_duration{scenario:load}': ['p(99)<500'] },
  churn: (k8s, t) => {
    t.scale(5);
    t.hold(third(t.cfg));
    t.scale(2);
    t.hold(third(t.cfg));
    t.scale(5);
  },
});

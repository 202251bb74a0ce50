// dynamic: the published churn test. Constant load while the backend scales 5 -> 7 -> 5 ...
// Reproduces: `while true; do kubectl scale --replicas=5; sleep 12; kubectl scale --replicas=7;
//   sleep 10; done` run beside wrk, here from inside k6 through the Kubernetes API.
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: the loop below on Deployment BENCH_DEPLOYMENT; BENCH_CHURN_PATTERN (replicas:hold steps,
//   default 5:12s,7:10s) changes the steps. bench measures desired/ready replicas, scale events and
//   endpoint convergence, and puts the backend back at the end (lib/churn-experiment.js).
// Thresholds: no dropped iterations (the rate must be held for the latency to mean anything).
import { experiment } from './lib/churn-experiment.js';

export const { options, setup, load, churn, teardown, handleSummary } = experiment({
  name: 'dynamic',
  summary: (cfg) => ({ churnPattern: cfg.churnPatternText }),
  churn: (k8s, t) => {
    for (;;) {
      for (const step of t.cfg.churnPattern) {
        t.scale(step.replicas);
        t.hold(step.holdMs);
      }
    }
  },
});

// rolling: a rolling restart of the backend under constant load.
// Reproduces: `kubectl rollout restart deployment/bench-backend` every BENCH_ROLL_INTERVAL while the
//   load runs: every pod is replaced, so the controller must follow a full endpoint turnover.
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: the pod-template annotation kubectl.kubernetes.io/restartedAt set on BENCH_DEPLOYMENT,
//   first after one interval; convergence and replicas measured like dynamic.js.
// Thresholds: no dropped iterations.
import { experiment } from './lib/churn-experiment.js';

export const { options, setup, load, churn, teardown, handleSummary } = experiment({
  name: 'rolling',
  churn: (k8s, t) => {
    for (;;) {
      t.hold(t.cfg.rollIntervalMs);
      t.rollout();
    }
  },
});

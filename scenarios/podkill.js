// podkill: backend pods die under constant load.
// Reproduces: deleting one backend pod every BENCH_PODKILL_INTERVAL (chaos-style), the Deployment
//   replaces it; the controller must stop sending to the dying pod and pick up the new one.
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: delete a random Ready pod matching BENCH_POD_SELECTOR in BENCH_NAMESPACE, first after one
//   interval; convergence and replicas measured like dynamic.js.
// Thresholds: no dropped iterations.
import { experiment } from './lib/churn-experiment.js';

export const { options, setup, load, churn, teardown, handleSummary } = experiment({
  name: 'podkill',
  churn: (k8s, t) => {
    for (;;) {
      t.hold(t.cfg.podkillIntervalMs);
      t.killPod();
    }
  },
});

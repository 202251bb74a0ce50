// podkill: backend pods die under constant load.
// Reproduces: deleting one backend pod every BENCH_PODKILL_INTERVAL (chaos-style), the Deployment
//   replaces it; the controller must stop sending to the dying pod and pick up the new one.
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: one 1-VU scenario deletes a random Ready pod matching BENCH_POD_SELECTOR in
//   BENCH_NAMESPACE (first after one interval), measuring convergence and replicas like dynamic.js.
// Thresholds: no dropped iterations.
import { runConfig } from './lib/run-config.js';
import { churnExperiment } from './lib/churn-experiment.js';

const cfg = runConfig(__ENV);
const experiment = churnExperiment('podkill', cfg, 'podkill');

export const options = experiment.options;
export const setup = experiment.setup;
export const load = experiment.load;
export const churn = experiment.churn;
export const teardown = experiment.teardown;
export const handleSummary = experiment.handleSummary;

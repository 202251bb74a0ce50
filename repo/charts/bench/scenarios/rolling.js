// rolling: a rolling restart of the backend under constant load.
// Reproduces: `kubectl rollout restart deployment/bench-backend` every BENCH_ROLL_INTERVAL while the
//   load runs: every pod is replaced, so the controller must follow a full endpoint turnover.
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: one 1-VU scenario sets the pod-template annotation kubectl.kubernetes.io/restartedAt on
//   BENCH_DEPLOYMENT (first after one interval), measuring convergence and replicas like dynamic.js.
// Thresholds: no dropped iterations.
import { runConfig } from './lib/run-config.js';
import { churnExperiment } from './lib/churn-experiment.js';

const cfg = runConfig(__ENV);
const experiment = churnExperiment('rolling', cfg, 'rollout');

export const options = experiment.options;
export const setup = experiment.setup;
export const load = experiment.load;
export const churn = experiment.churn;
export const teardown = experiment.teardown;
export const handleSummary = experiment.handleSummary;

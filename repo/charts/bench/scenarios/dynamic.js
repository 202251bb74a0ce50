// dynamic: the published churn test. Constant load while the backend scales 5 -> 7 -> 5 ...
// Reproduces: the scaling loop `kubectl scale --replicas=5; sleep 12; kubectl scale --replicas=7;
//   sleep 10; repeat` run beside wrk, here from inside k6 through the Kubernetes API.
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: one dedicated 1-VU scenario walks BENCH_CHURN_PATTERN (replicas:hold steps, repeated) on
//   Deployment BENCH_DEPLOYMENT: get, set spec.replicas, update (retried on 409 Conflict). It also
//   publishes desired/ready replicas, scale events and endpoint convergence (lib/churn.js). Its
//   first change records the starting state on the Deployment (annotation bench/churn-restore);
//   the end of the churn, teardown or the next run's setup puts it back. With TestRun parallelism
//   > 1 exactly one runner churns. Load VUs never touch the API.
// Thresholds: no dropped iterations (the rate must be held for the latency to mean anything).
import { runConfig } from './lib/run-config.js';
import { churnExperiment } from './lib/churn-experiment.js';

const cfg = runConfig(__ENV);
const experiment = churnExperiment('dynamic', cfg, 'scale', { churnPattern: cfg.churnPatternText });

export const options = experiment.options;
export const setup = experiment.setup;
export const load = experiment.load;
export const churn = experiment.churn;
export const teardown = experiment.teardown;
export const handleSummary = experiment.handleSummary;

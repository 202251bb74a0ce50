// static: the published steady-state test. A constant rate through one path, nothing moving.
// Reproduces: wrk -t2 -c1000 -d180s -R30000 against the ingress (open model, like wrk2).
// Load: BENCH_RATE req/s for BENCH_DURATION (constant-arrival-rate), BENCH_CONNECTIONS pre-allocated
//   VUs as the connection budget, keep-alive (BENCH_KEEPALIVE), BENCH_TIMEOUT per request.
//   BENCH_WARMUP (default 0s: none) runs the same load first and leaves it out of every figure.
// Churn: none.
// Thresholds: no dropped iterations. If k6 could not hold the rate the run fails (exit 99) and the
//   summary says so: its latency would not be the latency at the target rate.
import { experiment } from './lib/experiment.js';

export const { options, setup, load, teardown, handleSummary } = experiment({ name: 'static' });

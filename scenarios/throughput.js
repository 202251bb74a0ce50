// throughput: bytes per second with large bodies.
// Reproduces: the published throughput test: 1 MB responses through the path, reported as bytes/s.
// Load: as static.js, on BENCH_PATH (default here /bytes/1m). Size BENCH_RATE to the link: 1000
//   req/s of 1 MiB is 8 Gbit/s.
// Churn: none.
// Thresholds: no dropped iterations.
// Summary: throughput.bytes_received_per_s is the result; the latency is the full-body time.
import { experiment } from './lib/experiment.js';

export const { options, setup, load, teardown, handleSummary } = experiment({
  name: 'throughput',
  defaults: { BENCH_PATH: '/bytes/1m' },
});

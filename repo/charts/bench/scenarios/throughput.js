// throughput: bytes per second with large bodies.
// Reproduces: the published throughput test: 1 MB responses through the path, reported as bytes/s.
// Load: as static.js, on BENCH_PATH (default here /bytes/1m). Size BENCH_RATE to the link: 1000
//   req/s of 1 MiB is 8 Gbit/s.
// Churn: none.
// Thresholds: no dropped iterations.
// Summary: throughput.bytes_received_per_s is the result; the latency is the full-body time.
import { runConfig } from './lib/run-config.js';
import { steadyExperiment } from './lib/experiment.js';

const experiment = steadyExperiment('throughput', runConfig(__ENV, { BENCH_PATH: '/bytes/1m' }));

export const options = experiment.options;
export const setup = experiment.setup;
export const load = experiment.load;
export const handleSummary = experiment.handleSummary;

// Every custom metric bench emits (scenarios/interfaces.md), except the route experiments' own
// (route-metrics.js: only their scripts load them) and the churn VU's (churn-metrics.js: every VU
// of a churn run loads them): every metric object costs each VU about 1.5 KB of memory. A load VU
// loads none of these: k6/x/bench adds to bench_errors and the runner metrics from Go (request.go,
// lag.go), registering them under the same names and types. The summary writer loads this module
// and churn-metrics.js, so its sub-metric thresholds always find them.
// Remote write adds the k6_ prefix, _total to counters and _seconds to time trends.
'use strict';
const { Counter, Gauge, Trend } = require('k6/metrics');

// Failed requests by class (errors.js): connection, timeout, read, http_5xx, http_4xx, other.
const errors = new Counter('bench_errors');
// How late (ms) a sleeping VU of the runner_lag scenario woke up (lag.js): the runner's own CPU
// starvation. Tag role=lag only (plus run tags, and step in calibrate).
const runnerLag = new Trend('bench_runner_lag', true);
// The Go runtime's witnesses of the runner's own pauses, since the runner started (k6/x/bench
// runtimeStats, sent by the lag VUs every few seconds): p99 of the time ready goroutines waited for
// a CPU, in ms, and the garbage collector's share of the CPU the runner used (0-1).
const runnerSchedP99 = new Gauge('bench_runner_sched_p99_ms');
const runnerGcCpu = new Gauge('bench_runner_gc_cpu_ratio');
// The cgroup's witness (k6/x/bench cpuThrottling, sent with them): the share of CFS quota periods
// in which the runner's cgroup was throttled since the load began (0-1; 0 without a quota).
const runnerThrottled = new Gauge('bench_runner_cpu_throttled_ratio');

module.exports = {
  errors,
  runnerLag,
  runnerSchedP99,
  runnerGcCpu,
  runnerThrottled,
};

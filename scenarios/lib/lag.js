// Runner lag: is the k6 runner itself out of CPU? k6 cannot read /proc from a VU, so a few VUs of a
// small scenario (`runner_lag`, tag role=lag) sleep LAG_INTERVAL_MS again and again and record how
// much later than asked they woke up, in bench_runner_lag (Trend, ms). On a runner with CPU to spare
// a sleeping VU wakes within a millisecond or two; when the load VUs keep every core busy (or a pod
// CPU limit throttles the process) the wake-up waits in Go's run queue and the lag grows. The
// summary warns when its p95 exceeds LAG_LIMIT_MS (calibrated in scenarios/calibrate/README.md).
//
// The lag VUs run the entry script's `load` function (every entry script exports one; k6 needs an
// exported function name, and the library cannot add exports to entry scripts). The sampler itself
// is Go (k6/x/bench lagSample, scenarios/runner/xk6-bench/lag.go): bench.request, which every `load`
// calls through hit() (request.js), sees that its VU runs the scenario tagged role=lag and takes one
// sample instead of a request, so load VUs load none of this module (scenarios/calibrate/README.md,
// "Memory per VU"). This module keeps the scenario, the limits and the verdicts (VU 0's code).
'use strict';
const bench = require('k6/x/bench');

// k6 splits these VUs between runners by execution segment, like any scenario's: 32 give every
// runner of a TestRun with parallelism up to 32 at least one (a VU costs about 0.2 MB), and a
// single runner 80 samples a second.
const LAG_VUS = 32;
// The sleep per sample, +-50% (lag.go: one figure for both).
const LAG_INTERVAL_MS = bench.lagIntervalMs;
// Lag above these means the runner was short of CPU (scenarios/calibrate/README.md, "Runner lag"): with
// spare CPU p95 was 1-5 ms and the max 20 ms; saturated and competing for CPU, p95 14-111 ms. A CPU
// limit that throttles only now and then (a pod just under its need) leaves p95 low and shows in
// the p99 (77 ms at 30% of a core for a runner needing about 35%), hence the second limit.
const LAG_LIMIT_MS = 10;  // these limits: scenarios/contract.json verdicts.runnerLag (parity: contract.py k6-verdicts)
const LAG_LIMIT_P99_MS = 50;

// lagCpuBound(p95, p99): the verdict; null without samples.
function lagCpuBound(p95, p99) {
  if (p95 === null || p95 === undefined) return null;
  return p95 > LAG_LIMIT_MS || (p99 !== null && p99 !== undefined && p99 > LAG_LIMIT_P99_MS);
}
const LAG_ROLE = 'lag';

// The Go runtime's witnesses (k6/x/bench runtimeStats, from the first load request on): p99 of the
// time ready goroutines waited for a CPU, and the garbage collector's share of the CPU the runner
// used. A response waits that long before k6 times it. Calibrated in scenarios/calibrate/README.md
// ("Generator-added latency"): runs holding their rate with a p99 near vegeta's had a scheduling p99
// of 1.3-1.6 ms (measured from start-up); runs whose p99 the runner inflated 16-84 ms had 4-25 ms,
// and Go's default collector took 10-13% of the CPU where GOGC=off took under 0.5% (3 collections in
// a 180 s soak at 2,000 req/s).
const SCHED_LIMIT_P99_MS = 2;
const GC_CPU_LIMIT = 0.05;

// runtimeVerdict(schedP99Ms, gcCpuFraction): true when either is above its limit; null when the
// runtime gave no figures.
function runtimeVerdict(schedP99Ms, gcCpuFraction) {
  if (schedP99Ms === null || schedP99Ms === undefined) return null;
  return schedP99Ms > SCHED_LIMIT_P99_MS || (gcCpuFraction !== null && gcCpuFraction > GC_CPU_LIMIT);
}

// The cgroup's witness (k6/x/bench cpuThrottling, from the first load request): the share of CFS
// quota periods in which the kernel stopped the runner because its cgroup (a pod's CPU limit) had
// used its quota. A runner only just short of its quota is throttled in most periods while its lag
// probes still wake on time (2,000 req/s on 25% of a core: lag p95 1.6 ms, 189 iterations dropped).
// Calibrated in scenarios/calibrate/README.md ("Runner lag"): comfortable runners under a quota were
// throttled in 0-2% of the periods, starved ones in most of them.
const THROTTLED_LIMIT = 0.05;

// throttleVerdict(throttling): true when the runner was throttled in more than THROTTLED_LIMIT of
// its quota periods, false when less or when it has no quota, null when its cgroup's CPU accounting
// could not be read (unknown, not ok).
function throttleVerdict(t) {
  if (!t || !t.cgroup || t.throttled_ratio === null || t.throttled_ratio === undefined) return null;
  return t.throttled_ratio > THROTTLED_LIMIT;
}

// lagScenario(endMs): LAG_VUS VUs sampling the lag until endMs (the end of the last load scenario).
function lagScenario(endMs) {
  return {
    executor: 'constant-vus',
    exec: 'load',
    vus: LAG_VUS,
    duration: `${Math.max(1000, Math.round(endMs))}ms`,
    gracefulStop: `${LAG_INTERVAL_MS * 5}ms`,
    env: { bench_role: LAG_ROLE },
    tags: { role: LAG_ROLE },
  };
}

// isLagVu(env): true in a VU running the runner_lag scenario (its scenario-level __ENV); for
// scripts that send their requests through k6's http module (calibrate/variants.js), which then call
// runLag() themselves. k6 gives a VU a new __ENV object each time a scenario takes it, so the answer
// is kept per object.
let lastEnv = null;
let lastIsLag = false;
function isLagVu(env) {
  if (env !== lastEnv) {
    lastEnv = env;
    lastIsLag = env.bench_role === LAG_ROLE;
  }
  return lastIsLag;
}

// setLagPhases(list) (optional, in the init context of an entry script that runs load scenarios one
// after the other, e.g. calibrate.js): [{name, startMs, endMs}] from the start of the scenario. A
// lag sample taken during a phase gets the tag step=<name>, so the summary can judge each step's lag.
function setLagPhases(list) {
  bench.setLagPhases(list.map((p) => ({ name: p.name, startMs: p.startMs, endMs: p.endMs })));
}

// runLag(): one sample (k6/x/bench lagSample): the oversleep in bench_runner_lag and, every few
// samples, the runtime's and the cgroup's witnesses.
function runLag() {
  bench.lagSample();
}

module.exports = {
  LAG_VUS,
  LAG_INTERVAL_MS,
  LAG_LIMIT_MS,
  LAG_LIMIT_P99_MS,
  lagCpuBound,
  LAG_ROLE,
  SCHED_LIMIT_P99_MS,
  GC_CPU_LIMIT,
  runtimeVerdict,
  THROTTLED_LIMIT,
  throttleVerdict,
  lagScenario,
  isLagVu,
  setLagPhases,
  runLag,
};

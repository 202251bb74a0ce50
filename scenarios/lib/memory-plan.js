// The runner's memory against the VUs the script plans, checked in setup(), before any load VU
// sends a request: the chart's sizing guard (templates/validate.yaml) knows only the load that
// loadtest.* describes, while an entry script may plan scenarios of its own (a spike, stages, a
// second load). A plan beyond the runner's memory limit fails here, naming each scenario's VUs,
// instead of the pod being OOM-killed mid-run.
'use strict';
const exec = require('k6/execution');
const bench = require('k6/x/bench');
const { runnerShare } = require('./segment.js');
const { scenarioSpanMs } = require('./load-shape.js');

// Live heap of one runner (scenarios/contract.json runnerMemory; a VU keeps this literal copy,
// parity: ci/test/contract.py k6-runner-memory).
const RUNNER_MEMORY = { baseMB: 120, perVuMB: 0.37 };

// scenarioVUs(scenario): the most VUs k6 initializes for it (arrival-rate executors: maxVUs, else
// preAllocatedVUs; ramping-vus: the largest of startVUs and its stages' targets; others: vus).
function scenarioVUs(s) {
  switch (s.executor) {
    case 'constant-arrival-rate':
    case 'ramping-arrival-rate':
    case 'externally-controlled':
      return Number(s.maxVUs || s.preAllocatedVUs || 0);
    case 'ramping-vus':
      return Math.max(Number(s.startVUs === undefined ? 1 : s.startVUs), ...(s.stages || []).map((st) => Number(st.target)));
    default:
      return Number(s.vus === undefined ? 1 : s.vus);
  }
}

// plannedVUs(scenarios, share): {total, by: {scenario: VUs}} — the largest number of VUs held at
// one time (scenarios that overlap add up), of this runner's share of each (k6 splits a run's VUs
// across the runners of a parallel TestRun).
function plannedVUs(scenarios, share) {
  const by = {};
  const edges = [];
  for (const name of Object.keys(scenarios)) {
    const vus = Math.ceil(scenarioVUs(scenarios[name]) * share);
    by[name] = vus;
    // its gracefulStop left out: a VU goes back to k6's pool when its iteration ends, so the next
    // scenario of a sequence (paths, steps) reuses the VUs of the one before, as the chart's guard assumes
    const [start, end] = scenarioSpanMs(name, scenarios[name]);
    edges.push([start, vus], [end, -vus]);
  }
  // ends before starts at the same time: a scenario starting as another ends reuses its VUs
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let total = 0;
  for (const [, delta] of edges) {
    now += delta;
    total = Math.max(total, now);
  }
  return { total, by };
}

// checkPlannedMemory(scenarios, share, limitBytes): throws when baseMB + perVuMB x the planned VUs
// exceeds the runner's Go memory limit (limitBytes; none or unknown: no check).
function checkPlannedMemory(scenarios, share, limitBytes) {
  const limit = Number(limitBytes);
  if (!Number.isFinite(limit) || limit <= 0 || limit >= Number.MAX_SAFE_INTEGER) return null;
  const plan = plannedVUs(scenarios, share);
  const needMB = Math.ceil(RUNNER_MEMORY.baseMB + RUNNER_MEMORY.perVuMB * plan.total);
  const limitMiB = Math.floor(limit / 1048576);
  if (needMB > limitMiB) {
    const each = Object.keys(plan.by).map((n) => `${n} ${plan.by[n]}`).join(', ');
    throw new Error(`the script plans ${plan.total} VUs at once on this runner (${each}): about ${needMB} MB `
      + `(${RUNNER_MEMORY.baseMB} MB + ${RUNNER_MEMORY.perVuMB} MB a VU, scenarios/calibrate), above its memory `
      + `limit of ${limitMiB} MiB (GOMEMLIMIT). Give the runner more memory `
      + '(loadtest.runner.resources.limits.memory), more runners (loadtest.parallelism) or fewer VUs');
  }
  return { needMB, limitMiB, vus: plan.total };
}

// checkRunnerMemory(): checkPlannedMemory for this run, from setup() (k6 tells the options and this
// runner's execution segment only once the test runs; the arrival-rate executors start with their
// preAllocatedVUs and grow to maxVUs under load, which is where a short runner would die).
function checkRunnerMemory() {
  return checkPlannedMemory(exec.test.options.scenarios || {}, runnerShare(), bench.runtimeStats().memory_limit_bytes);
}

module.exports = {
  RUNNER_MEMORY,
  plannedVUs,
  checkPlannedMemory,
  checkRunnerMemory,
};

// The max-rps verdict: which staircase steps held the budget, and the knee (the highest that did).
'use strict';
const { ERROR_CLASSES } = require('./errors.js');
const { rateHeld } = require('./verdicts.js');

// judgeStep(rateTarget, requests, latency, errors, budget): one step against the budget
// {p99Ms, errorRatio}: within budget = no dropped iterations, the rate held (verdicts.js), p99 and
// the failed-request ratio within their limits.
// With several runners (execution segments) each judges its own share: requests.rate_target is this
// runner's part of the step (summary.js requestsFor) and rate_target_run the whole step's rate.
function judgeStep(rateTarget, requests, latency, errors, budget) {
  const failed = ERROR_CLASSES.reduce((n, c) => n + errors[c], 0);
  const errorRatio = requests.total > 0 ? failed / requests.total : 1;
  const ok = requests.total > 0 && requests.dropped_iterations === 0
    && rateHeld(requests)
    && latency.p99 !== null && latency.p99 <= budget.p99Ms && errorRatio <= budget.errorRatio;
  return {
    rate_target: requests.rate_target,
    rate_target_run: rateTarget,
    rate_achieved: requests.rate_achieved,
    p99_ms: latency.p99,
    error_ratio: Math.round(errorRatio * 1e6) / 1e6,
    dropped_iterations: requests.dropped_iterations,
    ok,
  };
}

// kneeRate(judged): the highest step rate within budget, or null.
function kneeRate(judged) {
  let knee = null;
  for (const j of judged) if (j.ok && (knee === null || j.rate_target > knee)) knee = j.rate_target;
  return knee;
}

// judgeRunnerStep(rateTarget, requests, latency, lag, cpuBound): one calibration step: did the
// runner hold the rate? Held = no dropped iterations, the rate held (verdicts.js) and the runner
// not CPU-bound by its lag (lag = {p95, p99} in ms or nulls; cpuBound = lag.js lagCpuBound). The
// latency is reported, not judged (the target is the backend Service, not what is measured here).
function judgeRunnerStep(rateTarget, requests, latency, lag, cpuBoundFn) {
  const cpuBound = cpuBoundFn(lag.p95, lag.p99) === true;
  const ok = requests.total > 0 && requests.dropped_iterations === 0
    && rateHeld(requests) && !cpuBound;
  return {
    rate_target: requests.rate_target,
    rate_target_run: rateTarget,
    rate_achieved: requests.rate_achieved,
    p99_ms: latency.p99,
    dropped_iterations: requests.dropped_iterations,
    lag_p95_ms: lag.p95,
    lag_p99_ms: lag.p99,
    cpu_bound: cpuBound,
    ok,
  };
}

// limitedBy(judged): what stopped the staircase: null if every step above the knee held,
// 'runner-cpu' if the first failing step above the knee had the runner CPU-bound, otherwise
// 'connections-or-target' (VUs all busy waiting on responses, or the target slower than the rate needs).
function limitedBy(judged) {
  const knee = kneeRate(judged);
  const first = judged.find((j) => !j.ok && (knee === null || j.rate_target > knee));
  if (!first) return null;
  return first.cpu_bound ? 'runner-cpu' : 'connections-or-target';
}

module.exports = {
  judgeStep,
  kneeRate,
  judgeRunnerStep,
  limitedBy,
};

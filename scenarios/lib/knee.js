// The max-rps verdict: which staircase steps held the budget, and the knee (the highest that did).
import { ERROR_CLASSES } from './errors.js';

// judgeStep(rateTarget, requests, latency, errors, budget): one step against the budget
// {p99Ms, errorRatio}: within budget = no dropped iterations, >= 95% of the rate achieved, p99 and
// the failed-request ratio within their limits.
export function judgeStep(rateTarget, requests, latency, errors, budget) {
  const failed = ERROR_CLASSES.reduce((n, c) => n + errors[c], 0);
  const errorRatio = requests.total > 0 ? failed / requests.total : 1;
  const ok = requests.total > 0 && requests.dropped_iterations === 0
    && requests.rate_achieved >= 0.95 * rateTarget
    && latency.p99 !== null && latency.p99 <= budget.p99Ms && errorRatio <= budget.errorRatio;
  return {
    rate_target: rateTarget,
    rate_achieved: requests.rate_achieved,
    p99_ms: latency.p99,
    error_ratio: Math.round(errorRatio * 1e6) / 1e6,
    dropped_iterations: requests.dropped_iterations,
    ok,
  };
}

// kneeRate(judged): the highest step rate within budget, or null.
export function kneeRate(judged) {
  let knee = null;
  for (const j of judged) if (j.ok && (knee === null || j.rate_target > knee)) knee = j.rate_target;
  return knee;
}

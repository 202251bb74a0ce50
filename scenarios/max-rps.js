// max-rps: the highest rate the path holds within a latency and error budget (sizing guide).
// Reproduces: the sizing-guide experiment: raise the offered rate until latency or errors break.
// Load: a staircase of STEPS constant-arrival-rate scenarios, one after the other, from BENCH_RATE/STEPS
//   up to BENCH_RATE req/s, each BENCH_DURATION/STEPS long, with BENCH_CONNECTIONS pre-allocated and
//   up to BENCH_MAX_CONNECTIONS VUs. Set BENCH_RATE above what you expect the path to hold.
// Budget (edit here): p99 <= BUDGET_P99_MS, failed requests <= BUDGET_ERROR_RATIO, no dropped
//   iterations and at least 95% of the step's rate achieved. The knee is the highest step within
//   budget; the summary lists every step (max_rps.steps) and the knee (max_rps.knee_rate).
// Churn: none.
// Thresholds: none (dropping iterations past the knee is expected; the budget decides).
import { loadConfig } from './lib/config.js';
import { target, hit, loadScenario, baseOptions, checkTarget } from './lib/load.js';
import {
  summaryThresholds, singleTargetReport, makeHandleSummary, requestsFor, latencyFrom, errorsFor,
} from './lib/summary.js';
import { ERROR_CLASSES } from './lib/errors.js';

const STEPS = 10;
const BUDGET_P99_MS = 50;
const BUDGET_ERROR_RATIO = 0.001;

const cfg = loadConfig(__ENV);
const request = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);
const stepMs = cfg.durationMs / STEPS;

const steps = [];
const scenarios = {};
for (let i = 1; i <= STEPS; i++) {
  const rate = Math.max(1, Math.round((cfg.rate * i) / STEPS));
  const scenario = `step_${String(i).padStart(2, '0')}`;
  scenarios[scenario] = loadScenario(cfg, { exec: 'load', rate, durationMs: stepMs, startMs: (i - 1) * stepMs });
  steps.push({ scenario, rateTarget: rate, durationMs: stepMs });
}

// judgeStep: one staircase step against the budget.
export function judgeStep(step, requests, latency, errors) {
  const failed = ERROR_CLASSES.reduce((n, c) => n + errors[c], 0);
  const errorRatio = requests.total > 0 ? failed / requests.total : 1;
  const ok = requests.total > 0 && requests.dropped_iterations === 0
    && requests.rate_achieved >= 0.95 * step.rateTarget
    && latency.p99 !== null && latency.p99 <= BUDGET_P99_MS && errorRatio <= BUDGET_ERROR_RATIO;
  return {
    rate_target: step.rateTarget,
    rate_achieved: requests.rate_achieved,
    p99_ms: latency.p99,
    error_ratio: Math.round(errorRatio * 1e6) / 1e6,
    dropped_iterations: requests.dropped_iterations,
    ok,
  };
}

const report = singleTargetReport('max-rps', cfg, {
  steps,
  extend(data, summary) {
    const judged = steps.map((s) => {
      const f = `scenario:${s.scenario}`;
      const m = data.metrics[`http_req_duration{${f}}`];
      return judgeStep(s, requestsFor(data, f, s.rateTarget, s.durationMs), latencyFrom(m && m.values), errorsFor(data, f));
    });
    let knee = null;
    for (const j of judged) if (j.ok) knee = j.rate_target;
    summary.max_rps = {
      budget: { p99_ms: BUDGET_P99_MS, error_ratio: BUDGET_ERROR_RATIO },
      knee_rate: knee,
      steps: judged,
    };
  },
});

export const options = baseOptions(cfg, scenarios, summaryThresholds(report, {}));

export function setup() {
  checkTarget(request, 'BENCH_TARGET_URL + BENCH_PATH');
}

export function load() {
  hit(request);
}

export const handleSummary = makeHandleSummary(report);

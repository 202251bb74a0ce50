// max-rps: the highest rate the path holds within a latency and error budget (sizing guide).
// Reproduces: the sizing-guide experiment: raise the offered rate until latency or errors break.
// Load: a staircase of STEPS constant-arrival-rate scenarios, one after the other, from BENCH_RATE/STEPS
//   up to BENCH_RATE req/s, each BENCH_DURATION/STEPS long, with BENCH_CONNECTIONS pre-allocated and
//   up to BENCH_MAX_CONNECTIONS VUs. Set BENCH_RATE above what you expect the path to hold.
// Budget (edit BUDGET here): p99 <= 50 ms, failed requests <= 0.1%, no dropped iterations and at
//   least 95% of the step's rate achieved (lib/knee.js). The knee is the highest step within budget;
//   the summary lists every step (max_rps.steps) and the knee (max_rps.knee_rate).
//   BENCH_DURATION must be at least 10s (k6 runs each step for 1 s or more).
// Churn: none.
// Thresholds: none (dropping iterations past the knee is expected; the budget decides).
import { runConfig } from './lib/run-config.js';
import { target, loadOnly } from './lib/request.js';
import { customExperiment } from './lib/experiment.js';

const STEPS = 10;
const BUDGET = { p99Ms: 50, errorRatio: 0.001 };

const cfg = runConfig(__ENV);
if (cfg.durationMs < STEPS * 1000) {
  // k6 runs a constant-arrival-rate scenario for at least 1 s.
  throw new Error(`invalid BENCH_DURATION=${JSON.stringify(__ENV.BENCH_DURATION)}: max-rps needs at least ${STEPS}s (${STEPS} steps of 1s or more)`);
}
const request = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);

const experiment = customExperiment(loadOnly(request), (lib) => {
  const { judgeStep, kneeRate } = require('./lib/knee.js');
  const { scenarios, steps } = lib.staircase(cfg, STEPS, 'load');
  const report = lib.singleTargetReport('max-rps', cfg, {
    steps,
    budget: BUDGET,
    extend(data, summary) {
      const judged = steps.map((s) => {
        const f = `scenario:${s.scenario}`;
        const m = data.metrics[`http_req_duration{${f}}`];
        return judgeStep(s.rateTarget, lib.requestsFor(data, f, s.rateTarget, s.durationMs), lib.latencyFrom(m && m.values),
          lib.errorsFor(data, f), BUDGET);
      });
      summary.max_rps = {
        budget: { p99_ms: BUDGET.p99Ms, error_ratio: BUDGET.errorRatio },
        knee_rate: kneeRate(judged),
        steps: judged,
      };
    },
  });
  return { scenarios, report, thresholds: {}, targets: [[request, 'BENCH_TARGET_URL + BENCH_PATH']] };
});

export const options = experiment.options;
export const setup = experiment.setup;
export const load = experiment.load;
export const handleSummary = experiment.handleSummary;

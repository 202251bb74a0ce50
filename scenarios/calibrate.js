// calibrate: the runner's own ceiling. How many requests per second can this k6 runner send, with
// bench's full measurement path on, before it runs out of CPU or connections?
// Reproduces: the load-generator check the published tests skipped: measure the client against the
//   backend Service with no controller in the path, so whatever limits the rate is the runner (or
//   the backend, which the summary then says).
// Target: BENCH_URL_CLUSTERIP when set (the chart always sets it: `loadtest.scenario: calibrate`),
//   else BENCH_TARGET_URL; path BENCH_PATH (default here /bytes/1k, the sizing table's body).
// Load: a staircase of STEPS constant-arrival-rate scenarios like max-rps.js, BENCH_RATE/STEPS up to
//   BENCH_RATE req/s, each BENCH_DURATION/STEPS long, BENCH_CONNECTIONS VUs. Set BENCH_RATE above what
//   you expect one runner to hold (about 4-5k req/s per core here, scenarios/calibrate/README.md).
// Verdict per step (lib/knee.js judgeRunnerStep): held = no dropped iterations, >= 95% of the rate
//   achieved, runner lag p95 and p99 within their limits (lib/lag.js). calibrate.ceiling_rate is the highest step
//   held; calibrate.limited_by says what broke the next one: runner-cpu or connections-or-target.
//   Each runner judges its own share of every step; with loadtest.parallelism N, `make results`
//   merges the whole steps across runners (ceiling_rate of all N, ceiling_rate_per_runner).
// Churn: none. Thresholds: none (failing steps past the ceiling are the point).
import { runConfig } from './lib/run-config.js';
import { target, hit, staircase, baseOptions, checkTarget } from './lib/load.js';
import { setLagPhases, lagCpuBound, LAG_LIMIT_MS, LAG_LIMIT_P99_MS } from './lib/lag.js';
import {
  summaryThresholds, singleTargetReport, makeHandleSummary, requestsFor, latencyFrom,
} from './lib/summary.js';
import { judgeRunnerStep, kneeRate, limitedBy } from './lib/knee.js';

const STEPS = 10;

const cfg = runConfig(__ENV, { BENCH_PATH: '/bytes/1k' });
if (cfg.durationMs < STEPS * 1000) {
  throw new Error(`invalid BENCH_DURATION=${JSON.stringify(__ENV.BENCH_DURATION)}: calibrate needs at least ${STEPS}s (${STEPS} steps of 1s or more)`);
}
const baseUrl = cfg.pathUrls.clusterip || cfg.targetUrl;
const request = target(cfg, baseUrl, cfg.path, cfg.keepalive);
const { scenarios, steps } = staircase(cfg, STEPS, 'load');
setLagPhases(steps.map((s) => ({ name: s.scenario, startMs: s.startMs, endMs: s.startMs + s.durationMs })));

const report = singleTargetReport('calibrate', cfg, {
  targetUrl: baseUrl,
  steps,
  extend(data, summary) {
    const judged = steps.map((s) => {
      const f = `scenario:${s.scenario}`;
      const m = data.metrics[`http_req_duration{${f}}`];
      const lag = data.metrics[`bench_runner_lag{step:${s.scenario}}`];
      const v = lag && lag.values.count ? lag.values : null;
      const lagMs = { p95: v ? Math.round(v['p(95)'] * 10) / 10 : null, p99: v ? Math.round(v['p(99)'] * 10) / 10 : null };
      return judgeRunnerStep(s.rateTarget, requestsFor(data, f, s.rateTarget, s.durationMs), latencyFrom(m && m.values),
        lagMs, lagCpuBound);
    });
    summary.calibrate = {
      lag_limit_ms: LAG_LIMIT_MS,
      lag_limit_p99_ms: LAG_LIMIT_P99_MS,
      ceiling_rate: kneeRate(judged),
      max_achieved_rate: Math.max.apply(null, judged.map((j) => j.rate_achieved)),
      limited_by: limitedBy(judged),
      steps: judged,
    };
  },
});

const thresholds = summaryThresholds(report, {});
for (const s of steps) thresholds[`bench_runner_lag{step:${s.scenario}}`] = ['max>=0'];

export const options = baseOptions(report, scenarios, thresholds);

export function setup() {
  checkTarget(request, cfg.pathUrls.clusterip ? 'BENCH_URL_CLUSTERIP + BENCH_PATH' : 'BENCH_TARGET_URL + BENCH_PATH', cfg);
}

export function load() {
  hit(request);
}

export const handleSummary = makeHandleSummary(report);

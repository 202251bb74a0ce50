// A script's own load shape: experiment({load: (cfg) => scenarios}) gives the measured load as k6
// scenarios in k6's own words (any executor, stages, start times) instead of bench's constant rate.
// bench makes each of them its measured load: it runs the load VUs' `load` function with role=load
// (so the request taxonomy, metrics, summary and dashboards count it), gets the connection budget
// when it is an arrival-rate executor that sets none (BENCH_CONNECTIONS pre-allocated,
// BENCH_MAX_CONNECTIONS at most) and bench's graceful stop, and starts after the warm-up if
// BENCH_WARMUP asks for one. planShape then gives the summary and bench_run_info the shape's own
// target: its planned requests over its length, so the runner's summary and the merged one agree.
// Only VU 0 loads this module (and memory-plan.js, for scenarioSpanMs).
'use strict';
const { durationMs } = require('./duration.js');
const { k6Duration } = require('./request.js');

// a k6 duration in ms (the contract's grammar; '0s' is 0, a jump between stages)
function ms(what, text) {
  const value = durationMs(String(text));
  if (Number.isNaN(value)) throw new Error(`${what}: ${JSON.stringify(text)} is not a k6 duration (e.g. 10s, 1m30s)`);
  return value;
}

// shapeScenarios(cfg, shape, exec, warmup): the scenarios of `shape` (one k6 scenario, or an object of
// them by name) as bench's measured load. warmup(cfg) gives the warm-up scenario (load.js), added
// before the shape when BENCH_WARMUP asks for one.
function shapeScenarios(cfg, shape, exec, gracefulStop, warmup) {
  const given = shape && typeof shape.executor === 'string' ? { load: shape } : shape;
  if (!given || typeof given !== 'object' || Object.keys(given).length === 0) {
    throw new Error('experiment({load}): load(cfg) must return a k6 scenario ({executor, ...}) or an object of them by name');
  }
  const out = {};
  for (const name of Object.keys(given)) {
    const s = given[name];
    if (!s || typeof s.executor !== 'string') {
      throw new Error(`experiment({load}): scenario ${name} has no executor (k6's, e.g. 'ramping-arrival-rate')`);
    }
    const what = `experiment({load}): load scenario ${name}`;
    const arrival = /-arrival-rate$/.test(s.executor);
    const own = Object.assign({}, s, {
      exec: s.exec || exec,
      startTime: k6Duration(cfg.warmupMs + ms(`${what} startTime`, s.startTime || '0s')),
      tags: Object.assign({}, s.tags, { role: 'load' }),
    });
    // durations in ms as bench writes them (load.js loadEndMs reads that form)
    if (s.duration) own.duration = k6Duration(ms(`${what} duration`, s.duration));
    if (s.stages) own.stages = s.stages.map((st, i) => Object.assign({}, st, { duration: k6Duration(ms(`${what} stage ${i + 1} duration`, st.duration)) }));
    out[name] = Object.assign({ gracefulStop: gracefulStop }, arrival ? { timeUnit: '1s', preAllocatedVUs: cfg.connections, maxVUs: cfg.maxConnections } : {}, own);
  }
  const plan = planShape(out);
  if (Math.abs(plan.durationMs - cfg.durationMs) > 1) {
    throw new Error(`experiment({load}): the load shape lasts ${plan.durationMs} ms, BENCH_DURATION ${cfg.durationMs} ms: `
      + 'build its stages and durations from cfg.durationMs (the churn, the summary and make results follow BENCH_DURATION)');
  }
  return cfg.warmupMs > 0 ? Object.assign(warmup(cfg), out) : out;
}

// plannedRequests(scenario): the iterations an arrival-rate scenario schedules (k6: rate per
// timeUnit, ramping linearly from startRate through each stage's target); null for the VU-based
// executors, whose rate the target's answers decide.
function plannedRequests(s) {
  const unitS = ms('timeUnit', s.timeUnit || '1s') / 1000;
  if (s.executor === 'constant-arrival-rate') return (Number(s.rate) / unitS) * (ms('duration', s.duration) / 1000);
  if (s.executor !== 'ramping-arrival-rate') return null;
  let from = Number(s.startRate || 0);
  let n = 0;
  for (const st of s.stages || []) {
    const to = Number(st.target);
    n += (((from + to) / 2) / unitS) * (ms('stage duration', st.duration) / 1000);
    from = to;
  }
  return n;
}

// k6's default maxDuration of the iteration-count executors, in ms.
const ITERATIONS_MAX_MS = 600000;

// scenarioSpanMs(name, scenario): [start, end) in ms of the time a k6 scenario runs (its stages, its
// duration, else its maxDuration or k6's default for the iteration-count executors).
function scenarioSpanMs(name, s) {
  const start = ms(`scenario ${name} startTime`, s.startTime || '0s');
  let length;
  if (s.stages) length = s.stages.reduce((t, st) => t + ms(`scenario ${name} stage duration`, st.duration), 0);
  else if (s.duration) length = ms(`scenario ${name} duration`, s.duration);
  else length = s.maxDuration ? ms(`scenario ${name} maxDuration`, s.maxDuration) : ITERATIONS_MAX_MS;
  return [start, start + length];
}

// planShape(scenarios): {rate, durationMs} of the measured load (role=load): its length from the
// first start to the last end (shapeScenarios holds it to BENCH_DURATION), and its mean planned rate
// (null when a scenario is VU-based).
function planShape(scenarios) {
  let start = Infinity;
  let end = 0;
  let requests = 0;
  for (const name of Object.keys(scenarios)) {
    const s = scenarios[name];
    if (!s.tags || s.tags.role !== 'load') continue;
    const [from, to] = scenarioSpanMs(name, s);
    start = Math.min(start, from);
    end = Math.max(end, to);
    const n = plannedRequests(s);
    requests = requests === null || n === null ? null : requests + n;
  }
  const durationMs = end > start ? end - start : 0;
  return { durationMs, rate: requests === null || durationMs === 0 ? null : Math.round((requests * 10000) / durationMs) / 10 };
}

module.exports = {
  shapeScenarios,
  planShape,
  scenarioSpanMs,
};

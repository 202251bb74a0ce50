// The load model: open model (constant arrival rate, like wrk2 -R) with a fixed connection budget
// (pre-allocated VUs, like wrk -c), keep-alive unless told otherwise, request timeout like wrk's,
// response bodies discarded. Plus the k6 options every entry script shares. The request itself
// (target, hit) is request.js, re-exported here for entry scripts that build their own options.
'use strict';
const { sleep } = require('k6');
const { k6Duration, target, hit, matchServerName } = require('./request.js');
const { lagScenario } = require('./lag.js');

// What only setup() uses (checkTarget): k6 runs setup in VU 0, so the load VUs of entry scripts that
// import this module skip k6's http module and the error classes (scenarios/calibrate/README.md, "Memory
// per VU").
const vu0 = __VU === 0
  ? { http: require('k6/http'), errors: require('./errors.js'), runInfo: require('./run-info.js') } : null;

const PERCENTILE_STATS = ['min', 'avg', 'max', 'p(50)', 'p(90)', 'p(95)', 'p(99)', 'p(99.9)', 'p(99.99)',
  'p(99.999)', 'p(99.9999)', 'count'];

// gracefulStopMs: how long after the end of a load scenario its in-flight requests may finish
// (they end by BENCH_TIMEOUT anyway). Scenarios that run one after another leave gapMs between them.
function gracefulStopMs(cfg) {
  return cfg.timeoutMs + 1000;
}
function gapMs(cfg) {
  return gracefulStopMs(cfg) + 1000;
}

// loadScenario: constant-arrival-rate at `rate` req/s. With TestRun parallelism k6 splits the rate
// and the VUs between runners by execution segment.
function loadScenario(cfg, opts) {
  return {
    executor: 'constant-arrival-rate',
    exec: opts.exec,
    rate: opts.rate,
    timeUnit: '1s',
    duration: k6Duration(opts.durationMs),
    startTime: k6Duration(opts.startMs || 0),
    preAllocatedVUs: cfg.connections,
    maxVUs: cfg.maxConnections,
    gracefulStop: k6Duration(gracefulStopMs(cfg)),
    tags: Object.assign({ role: 'load' }, opts.tags || {}),
  };
}

// The warm-up (BENCH_WARMUP): its scenario's name and role tag (scenarios/contract.json "warmup",
// parity: ci/test/contract.py k6-warmup). role=warmup keeps its samples out of every figure that
// counts role=load: the summary's, make results' and the dashboards'.
const WARMUP = Object.freeze({ scenario: 'warmup', role: 'warmup' });

// measuredLoad(cfg, exec): {warmup?, load}: the single measured load scenario `load` at cfg.rate for
// cfg.durationMs and, with a warm-up, the scenario `warmup` before it at the same rate and
// connection budget, from 0 until `load` starts. The warm-up has no graceful stop: its scenario ends
// exactly when `load` starts, so k6 hands its VUs, with their open connections, straight on to
// `load` (k6 reuses the VUs of scenarios that do not overlap; with a graceful stop they would, and
// `load` would start on fresh VUs and new connections). A warm-up request still in flight at the
// switch is cut short; it is a warm-up sample, left out like the rest.
function measuredLoad(cfg, exec) {
  const load = loadScenario(cfg, { exec, rate: cfg.rate, durationMs: cfg.durationMs, startMs: cfg.warmupMs });
  if (!(cfg.warmupMs > 0)) return { load };
  const warmup = Object.assign(loadScenario(cfg, { exec, rate: cfg.rate, durationMs: cfg.warmupMs }), {
    gracefulStop: '0s',
    tags: { role: WARMUP.role },
  });
  return { [WARMUP.scenario]: warmup, load };
}

// noDroppedIterations(cfg): the threshold that fails a run (exit 99) whose measured load dropped
// iterations. dropped_iterations carries no role tag: with a warm-up, the measured scenario `load`
// is selected by name (a warm-up that could not hold the rate fails nothing; the summary says it).
// names: the measured load's scenarios (a script's own shape may have several; default ['load']).
function noDroppedIterations(cfg, names) {
  if (!(cfg.warmupMs > 0)) return { dropped_iterations: ['count==0'] };
  const out = {};
  for (const name of (names || ['load']).filter((n) => n !== WARMUP.scenario)) out[`dropped_iterations{scenario:${name}}`] = ['count==0'];
  return out;
}

// staircase(cfg, stepCount, exec): stepCount constant-arrival-rate scenarios one after the other,
// cfg.rate/stepCount up to cfg.rate req/s, each cfg.durationMs/stepCount long (max-rps-style
// sizing). Returns {scenarios, steps: [{scenario, rateTarget, durationMs, startMs}]}.
function staircase(cfg, stepCount, exec) {
  const stepMs = Math.floor(cfg.durationMs / stepCount);
  const scenarios = {};
  const steps = [];
  for (let i = 1; i <= stepCount; i++) {
    const rate = Math.max(1, Math.round((cfg.rate * i) / stepCount));
    const scenario = `step_${String(i).padStart(2, '0')}`;
    const startMs = (i - 1) * stepMs;
    scenarios[scenario] = loadScenario(cfg, { exec, rate, durationMs: stepMs, startMs });
    steps.push({ scenario, rateTarget: rate, durationMs: stepMs, startMs });
  }
  return { scenarios, steps };
}

// rampScenario: ramping-arrival-rate through `stages` ([{target, durationMs}]).
function rampScenario(cfg, opts) {
  return {
    executor: 'ramping-arrival-rate',
    exec: opts.exec,
    startRate: opts.startRate,
    timeUnit: '1s',
    stages: opts.stages.map((s) => ({ target: s.target, duration: k6Duration(s.durationMs) })),
    preAllocatedVUs: cfg.connections,
    maxVUs: cfg.maxConnections,
    gracefulStop: k6Duration(gracefulStopMs(cfg)),
    tags: Object.assign({ role: 'load' }, opts.tags || {}),
  };
}

// durationMs(name, text): a duration option k6Duration built ("1500ms") back in ms.
function durationMs(name, text) {
  const t = String(text);
  const ms = t.endsWith('ms') ? Number(t.slice(0, -2)) : NaN;
  if (t.length < 3 || !(ms >= 0)) throw new Error(`scenario ${name}: duration ${JSON.stringify(text)} is not k6Duration's`);
  return ms;
}

// loadEndMs(scenarios): when the last load scenario (role=load) ends, from their k6 options.
function loadEndMs(scenarios) {
  let end = 0;
  for (const name of Object.keys(scenarios)) {
    const s = scenarios[name];
    if (!s.tags || s.tags.role !== 'load') continue;
    const start = durationMs(name, s.startTime || '0ms');
    const length = s.stages
      ? s.stages.reduce((n, st) => n + durationMs(name, st.duration), 0)
      : durationMs(name, s.duration);
    end = Math.max(end, start + length);
  }
  return end;
}

// baseOptions(report, scenarios, thresholds): shared k6 options for the experiment `report`
// describes (summary.js). `thresholds` are the experiment's; summaryThresholds() adds the
// sub-metrics handleSummary reads (k6 only reports a sub-metric that has a threshold). Every run
// also gets the runner_lag scenario (lag.js) for as long as its load scenarios last. Every sample
// carries testid and experiment (the entry script's name: k6's own `scenario` tag names its parts).
// Each part (report.parts: by_path) and step (report.steps: max-rps, calibrate) scenario also names
// itself, its whole-run rate and length, and a step its budget (report.budget), in tags: a merge of
// several runners from Prometheus rebuilds by_path and the knee from them (benchreport merge.py).
function baseOptions(report, scenarios, thresholds) {
  const cfg = report.cfg;
  refuseUnusedWarmup(report, scenarios);
  const all = Object.assign({}, scenarios, { runner_lag: lagScenario(loadEndMs(scenarios)) });
  for (const [kind, list] of [['path', report.parts || []], ['step', report.steps || []]]) {
    for (const p of list) {
      if (!all[p.scenario]) continue;
      const tags = Object.assign({}, all[p.scenario].tags, {
        part: p.name || p.scenario, part_kind: kind, part_rate: String(p.rateTarget), part_ms: String(p.durationMs),
      });
      if (kind === 'step' && report.budget) {
        tags.budget_p99_ms = String(report.budget.p99Ms);
        tags.budget_error_ratio = String(report.budget.errorRatio);
      }
      all[p.scenario] = Object.assign({}, all[p.scenario], { tags });
    }
  }
  // The run's tags on every scenario too: a `--tag` on k6's command line replaces the options'
  // whole tag map (k6 v0.51 and v1 alike; the k6-operator always adds --tag instance_id and testrun_name),
  // while scenario tags are merged into it. (dropped_iterations carries only the run's tags: the
  // chart passes experiment on the command line as well.)
  const runTags = { testid: cfg.testid, experiment: report.scenario };
  for (const name of Object.keys(all)) {
    all[name] = Object.assign({}, all[name], { tags: Object.assign({}, runTags, all[name].tags) });
  }
  return {
    scenarios: all,
    thresholds,
    summaryTrendStats: PERCENTILE_STATS,
    discardResponseBodies: true,
    insecureSkipTLSVerify: cfg.insecureTls,
    // setup() waits up to BENCH_READY_TIMEOUT for the target (checkTarget), then needs a little more
    setupTimeout: k6Duration(cfg.readyTimeoutMs + 60000),
    tags: runTags,
  };
}

// refuseUnusedWarmup(report, scenarios): a warm-up was asked for (BENCH_WARMUP) but the experiment
// built none (measuredLoad): it runs its load in parts or steps one after the other, each its own
// measurement, or beside route changes, and has no single start to warm up to (scenarios/contract.json
// warmup.refusedBy lists them; the chart refuses loadtest.warmup with them too).
function refuseUnusedWarmup(report, scenarios) {
  const cfg = report.cfg;
  if (!(cfg.warmupMs > 0) || Object.keys(scenarios).some((n) => (scenarios[n].tags || {}).role === WARMUP.role)) return;
  throw new Error(`invalid BENCH_WARMUP=${JSON.stringify(cfg.warmupText)}: ${report.scenario} takes no warm-up (its load `
    + 'runs in parts or steps one after the other, each measured on its own, or beside route changes); leave '
    + 'BENCH_WARMUP empty or 0s (chart: loadtest.warmup)');
}

// checkTarget(t, variable, cfg): setup() guard. The target must answer with a 2xx or 3xx within
// BENCH_READY_TIMEOUT, tried every second, or the run stops with a message naming the URL (a 404
// usually means a missing route). The wait covers what `helm install --wait` does not: the data
// plane a Gateway controller creates after the Gateway, which may still be starting when the
// TestRun does. Every setup() calls it, so it also starts the error-class series (errors.js) and
// writes the run's settings (bench_run_info, run-info.js).
function checkTarget(t, variable, cfg) {
  const { http, errors, runInfo } = vu0;
  errors.startErrorSeries();
  runInfo.recordRunInfo(cfg, t.url);
  matchServerName();
  // A distinct User-Agent lets servers tell the check from the measured load.
  const headers = Object.assign({}, t.params.headers, { 'User-Agent': 'bench-setup' });
  const params = Object.assign({}, t.params, { headers, responseType: 'none' });
  const deadline = Date.now() + cfg.readyTimeoutMs;
  let last = '';
  for (;;) {
    const res = http.get(t.url, params);
    if (res.status >= 200 && res.status < 400) return;
    last = res.error ? `${res.error} (k6 error_code ${res.error_code})` : `HTTP ${res.status}`;
    if (Date.now() + 1000 > deadline) break;
    sleep(1);
  }
  throw new Error(`target ${t.url} (${variable}) does not answer within ${cfg.readyTimeoutMs / 1000} s `
    + `(BENCH_READY_TIMEOUT): ${last}. Check the URL, that the route exists, that the backend is up and, `
    + 'through a Gateway, that its data plane is ready (kubectl get gateway,pods -n <namespace>).');
}

module.exports = {
  k6Duration,
  target,
  hit,
  PERCENTILE_STATS,
  gracefulStopMs,
  gapMs,
  loadScenario,
  WARMUP,
  measuredLoad,
  noDroppedIterations,
  staircase,
  rampScenario,
  loadEndMs,
  baseOptions,
  checkTarget,
};

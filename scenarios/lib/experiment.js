// experiment(definition): an entry script in one call (scenarios/README.md, "Write your own
// experiment"). The definition says what the experiment is; bench adds the load model, setup's
// checks, the runner-lag witness, the error classes, the thresholds the summary reads and the
// summary itself:
//
//   name        the summary's scenario and every sample's experiment tag
//   defaults    the script's own defaults for bench's variables, e.g. {BENCH_PATH: '/bytes/4k'}
//               (a variable the user sets still wins)
//   settings    settings of the script's own: {BENCH_SPIKE_HOLD: {type: 'duration', default: '20s'}}
//               (types: config.js SETTING_TYPES); validated in VU 0 with bench's variables, read as
//               t.settings / cfg.settings, shown in the summary (settings.script)
//   thresholds  k6 thresholds besides bench's own (no dropped iterations), or (cfg) => thresholds
//   summary     (cfg) => extra fields of the summary's report (summary.js), e.g. {churnPattern}
//   churn       (k8s, t) => { ... }: only through churn-experiment.js, which loads the churn code
//
// It returns {options, setup, load, churn, teardown, handleSummary} for the entry script to export
// under those names. customExperiment is the shape of entry scripts that build their own scenarios
// (keepalive, paths, tls-handshakes, max-rps).
'use strict';
const { target, loadOnly, k6Duration } = require('./request.js');
const { runConfig } = require('./run-config.js');

// VU 0 builds the options and runs setup, teardown and handleSummary; the load and lag VUs run
// load() only, so they load none of that code (scenarios/calibrate/README.md, "Memory per VU").
// setup() also restores a backend an earlier churn run left changed (churn.js).
const vu0 = __VU === 0
  ? {
    load: require('./load.js'),
    summary: require('./summary.js'),
    churn: require('./churn.js'),
    memoryPlan: require('./memory-plan.js'),
    loadShape: require('./load-shape.js'),
  }
  : null;

// experiment(definition): a steady experiment (no churn): one target, constant rate; the run fails
// (exit 99) if k6 dropped iterations, since its latency would not be the latency at the target rate.
function experiment(definition) {
  if (definition.churn) {
    throw new Error(`experiment ${definition.name}: a churn needs experiment() from lib/churn-experiment.js, `
      + 'which loads the churn code into every VU (k6 picks the churn VU after init)');
  }
  const built = buildExperiment(definition, {});
  if (!vu0) return built.vus;
  return Object.assign(built.vus, built.vu0({
    setup(cfg, request) {
      // A churn run whose runner was killed may have left the backend changed: put it back before
      // measuring the baseline (only where the API is reachable: in a pod, or with a kubeconfig).
      vu0.churn.churnCalls().restoreIfInCluster(cfg);
      vu0.load.checkTarget(request, 'BENCH_TARGET_URL + BENCH_PATH', cfg);
    },
    teardown() {},
  }));
}

// buildExperiment(definition, extra): {vus, vu0(hooks)}: what every VU exports ({load} and
// extra.vus) and, in VU 0, the options, setup, teardown and handleSummary around hooks.setup(cfg,
// request) and hooks.teardown(cfg, data); extra.scenarios(cfg): scenarios besides the load. The
// load VUs keep no reference to cfg or the definition (load() is request.js loadOnly's closure).
function buildExperiment(definition, extra) {
  if (!definition || !definition.name) throw new Error('experiment({name, ...}): the experiment needs a name');
  const cfg = runConfig(__ENV, definition.defaults, definition.settings);
  const request = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);
  const vus = Object.assign(loadOnly(request), extra.vus || {});
  return {
    vus,
    vu0(hooks) {
      const { measuredLoad, noDroppedIterations, baseOptions, gracefulStopMs, WARMUP } = vu0.load;
      const { summaryThresholds, singleTargetReport, makeHandleSummary } = vu0.summary;
      // the measured load, after the warm-up if BENCH_WARMUP asks for one: bench's constant rate
      // (load.js measuredLoad) or the script's own shape (load-shape.js), whose planned rate and
      // length are then the run's target in its summary and bench_run_info
      const load = definition.load
        ? vu0.loadShape.shapeScenarios(cfg, definition.load(cfg), 'load', k6Duration(gracefulStopMs(cfg)),
          (c) => ({ [WARMUP.scenario]: measuredLoad(c, 'load')[WARMUP.scenario] }))
        : measuredLoad(cfg, 'load');
      const runCfg = definition.load ? Object.assign({}, cfg, vu0.loadShape.planShape(load)) : cfg;
      const report = singleTargetReport(definition.name, runCfg, Object.assign(definition.summary ? definition.summary(cfg) : {},
        { section: definition.section, textLine: definition.textLine }));
      const own = typeof definition.thresholds === 'function' ? definition.thresholds(cfg) : definition.thresholds;
      const scenarios = Object.assign(load, extra.scenarios ? extra.scenarios(cfg) : {});
      return {
        // dropped_iterations carries no role tag; a churn VU (per-vu-iterations) never drops one.
        options: baseOptions(report, scenarios,
          summaryThresholds(report, Object.assign(noDroppedIterations(cfg, Object.keys(load)), own || {}))),
        setup: () => {
          vu0.memoryPlan.checkRunnerMemory();
          return hooks.setup(runCfg, request);
        },
        teardown: (data) => hooks.teardown(cfg, data),
        handleSummary: makeHandleSummary(report),
      };
    },
  };
}

// customExperiment(load, build): the shape of an entry script that builds its own scenarios and
// report (keepalive, paths, tls-handshakes, max-rps). load: the load VUs' {load} (request.js
// loadOnly, scenario-load.js loadByScenario). build(lib) runs in VU 0 only, during init, with lib =
// load.js's and summary.js's exports, and returns {scenarios, report, thresholds, targets}:
// targets = [[target, what it is]] for setup's checks. The load VUs so never create the
// scenarios, the report or the code that builds them, and since build is called in VU 0 only,
// nothing of the entry script's scope (its parsed configuration) stays alive in them.
function customExperiment(load, build) {
  if (!vu0) return load;
  const lib = Object.assign({}, vu0.load, vu0.summary);
  const { scenarios, report, thresholds, targets } = build(lib);
  return Object.assign(load, {
    options: lib.baseOptions(report, scenarios, lib.summaryThresholds(report, thresholds)),
    setup() {
      vu0.memoryPlan.checkRunnerMemory();
      for (const [t, what] of targets) lib.checkTarget(t, what, report.cfg);
    },
    handleSummary: lib.makeHandleSummary(report),
  });
}

module.exports = {
  experiment,
  buildExperiment,
  customExperiment,
};

// The steady experiment shape (static, throughput) and the custom one (entry scripts that build
// their own scenarios: keepalive, paths, tls-handshakes, max-rps). An entry script builds one and
// exports its parts under the names k6 looks for (options, setup, load, handleSummary). The churn
// shape lives in churn-experiment.js.
import { target, loadOnly } from './request.js';

// VU 0 builds the options and runs setup and handleSummary; the load and lag VUs run load() only,
// so they load none of that code (scenarios/calibrate/README.md, "Memory per VU"). setup() also restores a
// backend an earlier churn run left changed (churn.js).
const vu0 = __VU === 0
  ? { load: require('./load.js'), summary: require('./summary.js'), churn: require('./churn.js') }
  : null;

// steadyExperiment: one target, constant rate, no churn; the run fails (exit 99) if k6 dropped
// iterations, since its latency would not be the latency at the target rate.
export function steadyExperiment(name, cfg) {
  const request = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);
  const experiment = loadOnly(request);
  if (!vu0) return experiment;
  const { loadScenario, baseOptions, checkTarget } = vu0.load;
  const { summaryThresholds, singleTargetReport, makeHandleSummary } = vu0.summary;
  const report = singleTargetReport(name, cfg);
  return Object.assign(experiment, {
    options: baseOptions(report,
      { load: loadScenario(cfg, { exec: 'load', rate: cfg.rate, durationMs: cfg.durationMs }) },
      summaryThresholds(report, { dropped_iterations: ['count==0'] })),
    setup() {
      // A churn run whose runner was killed may have left the backend changed: put it back before
      // measuring the baseline (only where the API is reachable: in a pod, or with BENCH_KUBECONFIG).
      vu0.churn.churnCalls().restoreIfInCluster(cfg);
      checkTarget(request, 'BENCH_TARGET_URL + BENCH_PATH', cfg);
    },
    handleSummary: makeHandleSummary(report),
  });
}

// customExperiment(load, build): the shape of an entry script that builds its own scenarios and
// report (keepalive, paths, tls-handshakes, max-rps). load: the load VUs' {load} (request.js
// loadOnly, scenario-load.js loadByScenario). build(lib) runs in VU 0 only, during init, with lib =
// load.js's and summary.js's exports, and returns {scenarios, report, thresholds, targets}:
// targets = [[target, what it is]] for setup's checks. The load VUs so never create the
// scenarios, the report or the code that builds them, and since build is called in VU 0 only,
// nothing of the entry script's scope (its parsed configuration) stays alive in them.
export function customExperiment(load, build) {
  if (!vu0) return load;
  const lib = Object.assign({}, vu0.load, vu0.summary);
  const { scenarios, report, thresholds, targets } = build(lib);
  return Object.assign(load, {
    options: lib.baseOptions(report, scenarios, lib.summaryThresholds(report, thresholds)),
    setup() {
      for (const [t, what] of targets) lib.checkTarget(t, what, report.cfg);
    },
    handleSummary: lib.makeHandleSummary(report),
  });
}

// The churn experiment shape (dynamic, rolling, podkill): steadyExperiment's load (experiment.js) plus
// the 1-VU churn scenario. An entry script builds one and exports its parts under the names k6 looks
// for (options, setup, load, churn, teardown, handleSummary).
import { target, loadOnly } from './request.js';
import { churnCalls, churnScenario } from './churn.js';
import { runConfigAgain } from './run-config.js';

// VU 0 builds the options and runs setup, teardown and handleSummary; the other VUs load none of
// that code (scenarios/calibrate/README.md, "Memory per VU"). Every VU loads the churn modules, since
// k6 hands the churn scenario to a VU at run time, after init, and any VU may be the one that
// churns; their functions are made only in the VU that calls churnCalls() (churn.js).
const vu0 = __VU === 0 ? { load: require('./load.js'), summary: require('./summary.js') } : null;

// churnExperiment: steadyExperiment's load plus the 1-VU churn scenario running the plan named
// `planName` (churn.js churnCalls().plans: scale, rollout, podkill) against the Deployment; setup()
// also checks the API access the churn needs and restores a backend an earlier run left changed;
// teardown() restores what this run changed.
export function churnExperiment(name, cfg, planName, reportExtra) {
  const request = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);
  const experiment = Object.assign(loadOnly(request), churnOnly(planName));
  if (!vu0) return experiment;
  const { loadScenario, baseOptions, checkTarget } = vu0.load;
  const { summaryThresholds, singleTargetReport, makeHandleSummary } = vu0.summary;
  const { checkApi, restoreInTeardown } = churnCalls();
  const report = singleTargetReport(name, cfg, reportExtra);
  return Object.assign(experiment, {
    options: baseOptions(report,
      {
        load: loadScenario(cfg, { exec: 'load', rate: cfg.rate, durationMs: cfg.durationMs }),
        churn: churnScenario(cfg),
      },
      // dropped_iterations carries no role tag; the churn VU (per-vu-iterations) never drops one.
      summaryThresholds(report, { dropped_iterations: ['count==0'] })),
    setup() {
      checkTarget(request, 'BENCH_TARGET_URL + BENCH_PATH', cfg);
      return Object.assign(checkApi(cfg), { startedAt: Date.now() });
    },
    // Every end k6 itself survives puts the backend back; a killed runner leaves the record on the
    // Deployment for the next run's setup (checkApi).
    teardown(data) {
      restoreInTeardown(cfg, data);
    },
    handleSummary: makeHandleSummary(report),
  });
}

// churnOnly(planName): {churn} for the churn VU. Neither it nor load() (request.js loadOnly) keeps
// cfg: the churn VU reads the configuration again, and builds its probe target and the churn code,
// when its iteration starts.
function churnOnly(planName) {
  return {
    churn() {
      const cfg = runConfigAgain();
      const calls = churnCalls();
      calls.runChurn(cfg, calls.plans[planName](cfg), target(cfg, cfg.targetUrl, '/healthz', false));
    },
  };
}

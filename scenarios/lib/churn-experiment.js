// The churn experiment shape (dynamic, rolling, podkill): steadyExperiment's load (experiment.js) plus
// the 1-VU churn scenario. An entry script builds one and exports its parts under the names k6 looks
// for (options, setup, load, churn, teardown, handleSummary).
import { target, hit, loadScenario, baseOptions, checkTarget } from './load.js';
import { churnScenario, runChurn, checkApi, restoreInTeardown } from './churn.js';
import { summaryThresholds, singleTargetReport, makeHandleSummary } from './summary.js';

// churnExperiment: steadyExperiment's load plus the 1-VU churn scenario running `plan` (churn.js)
// against the Deployment; setup() also checks the API access the churn needs and restores a backend
// an earlier run left changed; teardown() restores what this run changed.
export function churnExperiment(name, cfg, plan, reportExtra) {
  const request = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);
  const probe = target(cfg, cfg.targetUrl, '/healthz', false);
  const report = singleTargetReport(name, cfg, reportExtra);
  return {
    options: baseOptions(report,
      {
        load: loadScenario(cfg, { exec: 'load', rate: cfg.rate, durationMs: cfg.durationMs }),
        churn: churnScenario(cfg),
      },
      // dropped_iterations carries no role tag; the churn VU (per-vu-iterations) never drops one.
      summaryThresholds(report, { dropped_iterations: ['count==0'] })),
    setup() {
      checkTarget(request, 'BENCH_TARGET_URL + BENCH_PATH');
      return Object.assign(checkApi(cfg), { startedAt: Date.now() });
    },
    load() {
      hit(request);
    },
    churn() {
      runChurn(cfg, plan, probe);
    },
    // Every end k6 itself survives puts the backend back; a killed runner leaves the record on the
    // Deployment for the next run's setup (checkApi).
    teardown(data) {
      restoreInTeardown(cfg, data);
    },
    handleSummary: makeHandleSummary(report),
  };
}

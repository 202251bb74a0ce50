// The steady experiment shape (static, throughput). An entry script builds one and exports its parts
// under the names k6 looks for (options, setup, load, handleSummary). The churn shape lives in
// churn-experiment.js, so steady runs do not carry the churn code in every load VU.
import { target, hit, loadScenario, baseOptions, checkTarget } from './load.js';
import { summaryThresholds, singleTargetReport, makeHandleSummary } from './summary.js';

// setup() (VU 0) restores a backend an earlier churn run left changed; only VU 0 loads that code.
const churn = __VU === 0 ? require('./churn.js') : null;

// steadyExperiment: one target, constant rate, no churn; the run fails (exit 99) if k6 dropped
// iterations, since its latency would not be the latency at the target rate.
export function steadyExperiment(name, cfg) {
  const request = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);
  const report = singleTargetReport(name, cfg);
  return {
    options: baseOptions(report,
      { load: loadScenario(cfg, { exec: 'load', rate: cfg.rate, durationMs: cfg.durationMs }) },
      summaryThresholds(report, { dropped_iterations: ['count==0'] })),
    setup() {
      // A churn run whose runner was killed may have left the backend changed: put it back before
      // measuring the baseline (only where the API is reachable: in a pod, or with BENCH_KUBECONFIG).
      churn.restoreIfInCluster(cfg);
      checkTarget(request, 'BENCH_TARGET_URL + BENCH_PATH');
    },
    load() {
      hit(request);
    },
    handleSummary: makeHandleSummary(report),
  };
}

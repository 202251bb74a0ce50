// experiment(definition) with a churn: experiment.js's definition plus
//
//   churn   (k8s, t) => { ... }: what happens to the backend while the load runs, written as a
//           function: t.scale(n), t.rollout(), t.killPod(), t.hold('15s'), t.settings
//           (churn-context.js); k8s is the xk6-kubernetes client, for anything else. It runs once,
//           in a dedicated 1-VU scenario `churn`; when it returns, bench keeps measuring until the
//           load ends, and when the load ends first, the churn stops there (a `for (;;)` loop too).
//   scenarios (cfg) => {name: k6 scenario}: scenarios of the experiment's own beside the load and
//           the churn (long-lived's stream VUs), each running the function of vus its exec names
//   vus     {name: function}: those functions, exported by the entry script with the others
//
// bench measures around it (churn.js): desired/ready replicas, scale events, endpoint convergence;
// setup() checks the API access the churn needs and restores a backend an earlier run left changed;
// the end of the churn, teardown() or the next run's setup puts the backend back as it was.
//
// Every VU loads the churn modules, since k6 hands the churn scenario to a VU at run time, after
// init, and any VU may be the one that churns; their functions are made only in the VU that calls
// churnCalls() (churn.js). Steady experiments take experiment() from experiment.js, without them.
'use strict';
const { target } = require('./request.js');
const { churnCalls, churnScenario } = require('./churn.js');
const { runConfigAgain } = require('./run-config.js');
const { buildExperiment } = require('./experiment.js');

// setup's target check, in VU 0 only (scenarios/calibrate/README.md, "Memory per VU").
const vu0 = __VU === 0 ? { load: require('./load.js') } : null;

function experiment(definition) {
  if (typeof definition.churn !== 'function') {
    throw new Error(`experiment ${definition.name}: churn must be a function (k8s, t) => { ... }; `
      + 'an experiment without one takes experiment() from lib/experiment.js');
  }
  const built = buildExperiment(definition, {
    vus: Object.assign(churnOnly(definition.churn), definition.vus || {}),
    // the churn starts with the measured load, after the warm-up
    scenarios: (cfg) => Object.assign({ churn: churnScenario(cfg, cfg.warmupMs) },
      definition.scenarios ? definition.scenarios(cfg) : {}),
  });
  if (!vu0) return built.vus;
  const { checkApi, restoreInTeardown } = churnCalls();
  return Object.assign(built.vus, built.vu0({
    setup(cfg, request) {
      vu0.load.checkTarget(request, 'BENCH_TARGET_URL + BENCH_PATH', cfg);
      return Object.assign(checkApi(cfg), { startedAt: Date.now() });
    },
    // Every end k6 itself survives puts the backend back; a killed runner leaves the record on the
    // Deployment for the next run's setup (checkApi).
    teardown(cfg, data) {
      restoreInTeardown(cfg, data);
    },
  }));
}

// churnOnly(script): {churn} for the churn VU. It keeps the script's function only: the churn VU
// reads the configuration again, and builds its probe target and the churn code, when its
// iteration starts.
function churnOnly(script) {
  return {
    churn() {
      const cfg = runConfigAgain();
      churnCalls().runChurn(cfg, script, target(cfg, cfg.targetUrl, '/healthz', false));
    },
  };
}

module.exports = {
  experiment,
};

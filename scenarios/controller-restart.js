// controller-restart: constant load while the controller's own pods are deleted one at a time.
// Reproduces: NGINX Gateway Fabric's "graceful recovery after a controller restart" (its per-release
//   suite): `kubectl delete pod` on each controller pod in turn beside the load, zero downtime
//   expected. For a controller with a separate data plane the pods are its control plane alone
//   (loadtest.controllerRestart in the presets says which), and the data plane must keep serving.
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: after BENCH_CONTROLLER_HOLD, delete one Ready pod matching BENCH_CONTROLLER_SELECTOR in
//   BENCH_CONTROLLER_NAMESPACE (empty = BENCH_NAMESPACE); hold until it is replaced and the path
//   answers again (at most BENCH_CONTROLLER_READY_TIMEOUT), then BENCH_CONTROLLER_HOLD; the next pod.
//   Every pod Ready at the start is deleted once. Per pod: the time to its replacement's Ready and
//   to the path answering again (summary controller_restart); each delete is an event
//   (bench_scale_events{action=controller_podkill}) the report attributes errors to.
// Thresholds: no dropped iterations, and no failed load request (the zero-error gate: exit 99 on any
//   error; the summary counts them as requests_lost, by class in errors).
import { experiment } from './lib/churn-experiment.js';

export const { options, setup, load, churn, teardown, handleSummary } = experiment({
  name: 'controller-restart',
  settings: {
    BENCH_CONTROLLER_NAMESPACE: { type: 'text', default: '' }, // the controller's namespace; empty = BENCH_NAMESPACE
    BENCH_CONTROLLER_SELECTOR: { type: 'labelSelector', default: 'app.kubernetes.io/name=traefik' }, // its pods
    BENCH_CONTROLLER_HOLD: { type: 'duration', default: '10s' }, // before the first delete and after each recovery
    BENCH_CONTROLLER_READY_TIMEOUT: { type: 'duration', default: '60s' }, // longest wait for one recovery
  },
  thresholds: { 'bench_errors{role:load}': ['count==0'] },
  summary: (cfg) => ({
    controllerRestart: {
      namespace: cfg.settings.BENCH_CONTROLLER_NAMESPACE || cfg.namespace,
      selector: cfg.settingTexts.BENCH_CONTROLLER_SELECTOR,
    },
  }),
  churn: (k8s, t) => {
    t.hold(t.settings.BENCH_CONTROLLER_HOLD);
    for (const pod of t.controllerPods()) {
      t.killControllerPod(pod);
      t.waitRecovered(t.settings.BENCH_CONTROLLER_READY_TIMEOUT);
      t.hold(t.settings.BENCH_CONTROLLER_HOLD);
    }
  },
});

// controller-upgrade: constant load across a rolling update of the controller.
// Reproduces: NGINX Gateway Fabric's zero-downtime upgrade test (its per-release suite): the
//   controller's workload rolls to a new version under constant load, zero downtime expected.
//   loadtest.controllerUpgrade in the presets names the workload that rolls (for a controller with
//   a separate data plane: which of the two).
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: after BENCH_UPGRADE_HOLD, change the pod template of BENCH_UPGRADE_KIND (Deployment or
//   DaemonSet) BENCH_UPGRADE_NAME in BENCH_UPGRADE_NAMESPACE (empty = BENCH_NAMESPACE): a new
//   bench/restartedAt annotation, as `kubectl rollout restart` does, and, when BENCH_UPGRADE_IMAGE is
//   set, that image on container BENCH_UPGRADE_CONTAINER (the upgrade proper). Follow the rollout
//   until complete (observedGeneration, updated and available replicas, every old pod terminating;
//   at most BENCH_UPGRADE_READY_TIMEOUT), then BENCH_UPGRADE_HOLD. The update is an event
//   (bench_scale_events{action=controller_rollout}), and so is every old pod seen terminating
//   (controller_pod_terminating) and every new pod seen Ready (controller_pod_ready): the report
//   attributes errors to each. Summary controller_upgrade: what changed, the rollout's duration, per
//   pod when it terminated or was Ready.
// At the end: an annotation alone is left on the workload (rolled, as `kubectl rollout restart`
//   leaves it: putting it back would roll the controller once more and changes nothing it runs). A
//   changed image is put back at the end of the churn (else by teardown or the next run's setup, from
//   the bench/churn-restore record), which rolls the controller again after the load: left in place,
//   the new image would outlive the run unnoticed (helm's three-way merge keeps a live change the chart
//   did not make), and the next run on the same preset would measure another version.
// Thresholds: no dropped iterations, and no failed load request (the zero-error gate: exit 99 on any
//   error; the summary counts them as requests_lost, by class in errors).
import { experiment } from './lib/churn-experiment.js';

export const { options, setup, load, churn, teardown, handleSummary } = experiment({
  name: 'controller-upgrade',
  settings: {
    BENCH_UPGRADE_KIND: { type: 'oneOf', default: 'Deployment', values: ['Deployment', 'DaemonSet'] },
    BENCH_UPGRADE_NAMESPACE: { type: 'text', default: '' }, // the workload's namespace; empty = BENCH_NAMESPACE
    BENCH_UPGRADE_NAME: { type: 'dnsName', default: 'traefik' }, // the workload that rolls
    BENCH_UPGRADE_CONTAINER: { type: 'text', default: '' }, // the container BENCH_UPGRADE_IMAGE goes to
    BENCH_UPGRADE_IMAGE: { type: 'text', default: '' }, // empty = the annotation alone (a restart)
    BENCH_UPGRADE_FROM: { type: 'text', default: '' }, // the image a changed one goes back to: the installer's, never the record's
    BENCH_UPGRADE_HOLD: { type: 'duration', default: '10s' }, // before the rollout and after it
    BENCH_UPGRADE_READY_TIMEOUT: { type: 'duration', default: '120s' }, // longest wait for the rollout
  },
  thresholds: { 'bench_errors{role:load}': ['count==0'] },
  summary: (cfg) => {
    const s = cfg.settings;
    if (s.BENCH_UPGRADE_IMAGE && !s.BENCH_UPGRADE_CONTAINER) {
      throw new Error(`BENCH_UPGRADE_IMAGE=${s.BENCH_UPGRADE_IMAGE} needs BENCH_UPGRADE_CONTAINER: the container to give it`);
    }
    return {
      controllerUpgrade: {
        kind: s.BENCH_UPGRADE_KIND,
        namespace: s.BENCH_UPGRADE_NAMESPACE || cfg.namespace,
        name: s.BENCH_UPGRADE_NAME,
        container: s.BENCH_UPGRADE_IMAGE ? s.BENCH_UPGRADE_CONTAINER : null,
        imageTo: s.BENCH_UPGRADE_IMAGE || null,
      },
    };
  },
  churn: (k8s, t) => {
    t.hold(t.settings.BENCH_UPGRADE_HOLD);
    t.rollController();
    t.waitRolledOut(t.settings.BENCH_UPGRADE_READY_TIMEOUT);
    t.hold(t.settings.BENCH_UPGRADE_HOLD);
  },
});

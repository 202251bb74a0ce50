// dataplane-scale: the controller's data plane (a Deployment) scaled up and down under constant load.
// Reproduces: NGINX Gateway Fabric's zero-downtime data-plane scaling (its per-release suite): scale
//   the data plane's Deployment up and back down, gradually (one replica at a time) and abruptly
//   (straight to the target), under HTTP and HTTPS load (loadtest.target ingress with TLS gives
//   HTTPS), zero downtime expected. loadtest.dataplaneScale in the presets names the Deployment, or
//   says why the experiment does not apply to a controller. NGF itself scales through the NginxProxy
//   that configures the Gateway (its test framework's ScaleNginxDeployment): NGF copies that object's
//   replicas onto the NGINX Deployment and puts back any change made to the Deployment directly.
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: after BENCH_DATAPLANE_HOLD, scale Deployment BENCH_DATAPLANE_DEPLOYMENT in
//   BENCH_DATAPLANE_NAMESPACE (empty = BENCH_NAMESPACE) from its replicas at the start through each
//   of BENCH_DATAPLANE_LEVELS in turn (e.g. 3,1: up to 3, back to 1); BENCH_DATAPLANE_MODE gradual
//   moves one replica per step, abrupt straight to each level. With BENCH_DATAPLANE_PARAMETERS_KIND
//   set, each step sets field BENCH_DATAPLANE_PARAMETERS_REPLICAS of that object instead
//   (BENCH_DATAPLANE_PARAMETERS_NAME in BENCH_DATAPLANE_PARAMETERS_NAMESPACE, empty = the
//   Deployment's), and the Deployment is only read. After each step: wait until exactly
//   that many replicas are Ready (at most BENCH_DATAPLANE_READY_TIMEOUT), then BENCH_DATAPLANE_HOLD.
//   Per step: the time to Ready and the churn's failed probes (summary dataplane_scale); each scale
//   is an event (bench_scale_events{action=dataplane_scale}) the report attributes errors to. The
//   end of the churn (else teardown, else the next run's setup) puts the replicas back where it set
//   them.
// Thresholds: no dropped iterations, and no failed load request (the zero-error gate: exit 99 on any
//   error; the summary counts them as requests_lost, by class in errors).
import { experiment } from './lib/churn-experiment.js';
import { dataplaneSteps, scaledObject } from './lib/dataplane.js';

export const { options, setup, load, churn, teardown, handleSummary } = experiment({
  name: 'dataplane-scale',
  settings: {
    BENCH_DATAPLANE_NAMESPACE: { type: 'text', default: '' }, // the data plane's namespace; empty = BENCH_NAMESPACE
    BENCH_DATAPLANE_DEPLOYMENT: { type: 'dnsName', default: 'traefik' }, // the data plane's Deployment
    // what the steps set instead of the Deployment's spec.replicas: the object its controller copies
    // them from (empty = the Deployment itself), as Kind.group, e.g. NginxProxy.gateway.nginx.org
    BENCH_DATAPLANE_PARAMETERS_KIND: { type: 'apiKind', default: '' },
    BENCH_DATAPLANE_PARAMETERS_NAMESPACE: { type: 'text', default: '' }, // empty = BENCH_DATAPLANE_NAMESPACE's
    BENCH_DATAPLANE_PARAMETERS_NAME: { type: 'text', default: '' }, // its name (needed with a kind)
    // its field that holds the replicas (NginxProxy: spec.kubernetes.deployment.replicas)
    BENCH_DATAPLANE_PARAMETERS_REPLICAS: { type: 'fieldPath', default: 'spec.replicas' },
    BENCH_DATAPLANE_LEVELS: { type: 'counts', default: '3,1', max: 100 }, // replicas to reach, in turn
    BENCH_DATAPLANE_MODE: { type: 'oneOf', default: 'gradual', values: ['gradual', 'abrupt'] },
    BENCH_DATAPLANE_HOLD: { type: 'duration', default: '10s' }, // before the first step and after each
    BENCH_DATAPLANE_READY_TIMEOUT: { type: 'duration', default: '60s' }, // longest wait for one step
  },
  thresholds: { 'bench_errors{role:load}': ['count==0'] },
  summary: (cfg) => ({
    dataplaneScale: {
      namespace: cfg.settings.BENCH_DATAPLANE_NAMESPACE || cfg.namespace,
      deployment: cfg.settings.BENCH_DATAPLANE_DEPLOYMENT,
      scaled: scaledObject(cfg),
      levels: cfg.settings.BENCH_DATAPLANE_LEVELS,
      mode: cfg.settings.BENCH_DATAPLANE_MODE,
    },
  }),
  churn: (k8s, t) => {
    const s = t.settings;
    t.hold(s.BENCH_DATAPLANE_HOLD);
    for (const replicas of dataplaneSteps(t.dataplaneReplicas(), s.BENCH_DATAPLANE_LEVELS, s.BENCH_DATAPLANE_MODE)) {
      t.scaleDataplane(replicas);
      t.waitDataplaneReady(s.BENCH_DATAPLANE_READY_TIMEOUT);
      t.hold(s.BENCH_DATAPLANE_HOLD);
    }
  },
});

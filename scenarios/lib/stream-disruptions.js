// long-lived's disruptions that are not the backend's or the controller's own (churn.js makes them,
// churn-context.js offers them to the script): the stream backend's Deployment, scaled up and back
// (t.scaleStream), and one extra route on the test's host, created and deleted (t.createReloadRoute,
// t.deleteReloadRoute), which makes NGINX-based controllers reload their configuration. Pure: the
// churn VU passes the xk6-kubernetes client in.
'use strict';
const { KINDS, ROUTE_LABEL, runLabel, routeName } = require('./route-names.js');

// Only the disruptions BENCH_LONGLIVED_DISRUPTIONS lists get the runner's rights (the chart grants
// each rule by it): a run that declares that setting touches nothing else.
function disrupts(cfg, what) {
  const list = (cfg.settings || {}).BENCH_LONGLIVED_DISRUPTIONS;
  return list === undefined || list.includes(what);
}

// streamRun(cfg): the run scales the stream backend (long-lived with the backend disruption).
function streamRun(cfg) {
  return Boolean((cfg.settings || {}).BENCH_STREAM_DEPLOYMENT) && disrupts(cfg, 'backend');
}

// streamTarget(cfg): cfg naming the stream backend's Deployment (in the release namespace), for the
// calls that change a Deployment and put it back (kube.js dataplaneTarget says why).
function streamTarget(cfg) {
  return Object.assign({}, cfg, { deployment: cfg.settings.BENCH_STREAM_DEPLOYMENT });
}

const RELOAD_PATH = '/bench-reload';

// reloadRoute(cfg): the extra route: the kind BENCH_ROUTE_KIND names (its first), on the test's host
// (BENCH_TARGET_HOST, else the target URL's), path prefix RELOAD_PATH to the first Service of
// BENCH_ROUTE_BACKENDS, labelled with the run like the route experiments' routes.
function reloadRoute(cfg) {
  const kind = cfg.routes.kinds[0];
  const host = (cfg.targetHost || cfg.targetUrl.replace(/^[a-z]+:\/\//, '').replace(/\/.*$/, '')).replace(/:\d+$/, '');
  const backend = cfg.routes.backends[0];
  const metadata = { name: routeName(kind, 'reload'), namespace: cfg.namespace, labels: { [ROUTE_LABEL]: runLabel(cfg) } };
  if (kind === 'httproute') {
    const parentRef = { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: cfg.gateway.name, namespace: cfg.gateway.namespace };
    if (cfg.gateway.listener) parentRef.sectionName = cfg.gateway.listener;
    return { kind, obj: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata,
      spec: { parentRefs: [parentRef], hostnames: [host],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: RELOAD_PATH } }],
          backendRefs: [{ group: '', kind: 'Service', name: backend.name, port: backend.port }] }] } } };
  }
  const spec = { rules: [{ host, http: { paths: [{ path: RELOAD_PATH, pathType: 'Prefix',
    backend: { service: { name: backend.name, port: { number: backend.port } } } }] } }] };
  if (cfg.routes.ingressClass) spec.ingressClassName = cfg.routes.ingressClass;
  return { kind, obj: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata, spec } };
}

function isStatus(err, code, word) {
  return new RegExp(`\\b${code}\\b|${word}`, 'i').test(String(err));
}

// deleteReloadRoute(k8s, cfg) -> whether there was one to delete.
function deleteReloadRoute(k8s, cfg) {
  const { kind, obj } = reloadRoute(cfg);
  try {
    k8s.delete(KINDS[kind].api, obj.metadata.name, cfg.namespace);
    return true;
  } catch (err) {
    if (isStatus(err, 404, 'not found')) return false;
    throw err;
  }
}

// createReloadRoute(k8s, cfg): creates the route; one an earlier run left (a killed runner) is
// deleted first, so every reload is a creation.
function createReloadRoute(k8s, cfg) {
  const { obj } = reloadRoute(cfg);
  try {
    k8s.create(obj);
  } catch (err) {
    if (!isStatus(err, 409, 'already exists')) throw err;
    deleteReloadRoute(k8s, cfg);
    k8s.create(reloadRoute(cfg).obj);
  }
  return true;
}

// longLivedChurn(k8s, t): long-lived's churn (scenarios/long-lived.js): BENCH_LONGLIVED_HOLD, then each
// of BENCH_LONGLIVED_DISRUPTIONS in turn and BENCH_LONGLIVED_HOLD after each. reload: the extra route
// created, held, deleted (deleted even when the load ends during its hold); backend: the stream
// backend to BENCH_STREAM_REPLICAS + 2, held, back; controller: as controller-restart.js.
function longLivedChurn(k8s, t) {
  const s = t.settings;
  t.hold(s.BENCH_LONGLIVED_HOLD);
  for (const what of s.BENCH_LONGLIVED_DISRUPTIONS) {
    if (what === 'reload') {
      try {
        t.createReloadRoute();
        t.hold(s.BENCH_LONGLIVED_HOLD);
      } finally {
        t.deleteReloadRoute();
      }
    } else if (what === 'backend') {
      t.scaleStream(s.BENCH_STREAM_REPLICAS + 2);
      t.hold(s.BENCH_LONGLIVED_HOLD);
      t.scaleStream(s.BENCH_STREAM_REPLICAS);
    } else {
      for (const pod of t.controllerPods()) {
        t.killControllerPod(pod);
        t.waitRecovered(s.BENCH_CONTROLLER_READY_TIMEOUT);
        t.hold(s.BENCH_CONTROLLER_HOLD);
      }
    }
    t.hold(s.BENCH_LONGLIVED_HOLD);
  }
}

module.exports = {
  longLivedChurn,
  RELOAD_PATH,
  disrupts,
  streamRun,
  streamTarget,
  reloadRoute,
  createReloadRoute,
  deleteReloadRoute,
};

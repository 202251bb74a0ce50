// Routes for the route experiments (route-propagation, route-change, route-scale): the HTTPRoutes or
// Ingresses a run creates, changes and deletes through xk6-kubernetes v0.9.0, and the probes that
// tell when one serves. Every route a run creates is named bench-route-<h|i>-<n>, answers on its own
// host (h-<n>.<BENCH_ROUTE_DOMAIN> for HTTPRoutes, i-<n>.<domain> for Ingresses, so the two kinds of
// the migration A/B never share a host) and carries the label ROUTE_LABEL=<run id>: teardown deletes
// exactly this run's routes, the next run's setup those an earlier run left (a killed runner).
// The permissions these calls need are stated once, in scenarios/contract.json runnerRole.
'use strict';
const http = require('k6/http');
const { sleep } = require('k6');
const { connect } = require('./kube.js');
const { KINDS, ROUTE_LABEL, routeName, runLabel } = require('./route-names.js');
const { matchServerName } = require('./request.js');
const { routePropagation, routePreReady, routesCreated, routesUnconverged, routesServing } = require('./route-metrics.js');

// client-go limits each API client to 5 requests/s (burst 10) and xk6-kubernetes v0.9.0 cannot
// change that: route-scale creates through this many clients in turn, about kubectl's 50/s.
const API_CLIENTS = 10;
// Probe cadence while a route is not serving yet: the resolution of the propagation times.
const PROBE_INTERVAL_MS = 20;
const PROBE_BATCH = 20; // at most this many probes per round (route-scale, route-change's setup)
const CONFLICT_RETRIES = 5;

// Probe answers before a route's first 200, by bucket (bench_route_pre_ready{status}).
const PRE_READY_STATUSES = ['404', '503', 'other_4xx', 'other_5xx', '3xx', 'no_response', 'other'];

function routeHost(cfg, kind, n) {
  return `${KINDS[kind].letter}-${n}.${cfg.routes.domain}`;
}

// preReadyBucket(status): where a probe answer that is not the first 200 is counted; null for 200.
function preReadyBucket(status) {
  if (status === 200) return null;
  if (status === 404 || status === 503) return String(status);
  if (status === 0) return 'no_response';
  if (status >= 300 && status < 400) return '3xx';
  if (status >= 400 && status < 500) return 'other_4xx';
  if (status >= 500 && status < 600) return 'other_5xx';
  return 'other';
}

// buildRoute(cfg, kind, n, backend): the HTTPRoute or Ingress object of route n, all paths of its
// host to backend {name, port}. Built completely before it is handed to xk6-kubernetes (kube.js:
// nested objects are copied at assignment).
function buildRoute(cfg, kind, n, backend) {
  const metadata = { name: routeName(kind, n), namespace: cfg.namespace, labels: { [ROUTE_LABEL]: runLabel(cfg) } };
  if (kind === 'httproute') {
    const parentRef = { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: cfg.gateway.name, namespace: cfg.gateway.namespace };
    if (cfg.gateway.listener) parentRef.sectionName = cfg.gateway.listener;
    return {
      apiVersion: KINDS.httproute.apiVersion,
      kind: 'HTTPRoute',
      metadata,
      spec: {
        parentRefs: [parentRef],
        hostnames: [routeHost(cfg, kind, n)],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [httpBackendRef(backend)] }],
      },
    };
  }
  const spec = { rules: [{ host: routeHost(cfg, kind, n), http: { paths: [ingressPath(backend)] } }] };
  if (cfg.routes.ingressClass) spec.ingressClassName = cfg.routes.ingressClass;
  return { apiVersion: KINDS.ingress.apiVersion, kind: 'Ingress', metadata, spec };
}

function httpBackendRef(backend) {
  return { group: '', kind: 'Service', name: backend.name, port: backend.port };
}

function ingressPath(backend) {
  return { path: '/', pathType: 'Prefix', backend: { service: { name: backend.name, port: { number: backend.port } } } };
}

// setRouteBackend(obj, kind, backend): points every rule of a fetched route at backend.
function setRouteBackend(obj, kind, backend) {
  const spec = obj.spec;
  if (kind === 'httproute') {
    spec.rules = spec.rules.map((r) => Object.assign({}, r, { backendRefs: [httpBackendRef(backend)] }));
  } else {
    spec.rules = spec.rules.map((r) => ({ host: r.host, http: { paths: [ingressPath(backend)] } }));
  }
  obj.spec = spec;
}

// ApiPool: API_CLIENTS (or `size`) xk6-kubernetes clients used in turn. Create it inside the
// iteration (or setup/teardown) that uses it: xk6-kubernetes v0.9.0 binds a client to that context.
class ApiPool {
  constructor(cfg, size) {
    this.clients = [];
    for (let i = 0; i < (size || 1); i++) this.clients.push(connect(cfg));
    this.next = 0;
  }

  take() {
    const c = this.clients[this.next];
    this.next = (this.next + 1) % this.clients.length;
    return c;
  }
}

function isStatus(err, code, word) {
  return new RegExp(`\\b${code}\\b|${word}`, 'i').test(String(err));
}

// createRoute -> true when created, false when this run's route of that name already exists (another
// runner's setup of the same run made it).
function createRoute(k8s, cfg, kind, n, backend) {
  try {
    k8s.create(buildRoute(cfg, kind, n, backend));
    return true;
  } catch (err) {
    if (!isStatus(err, 409, 'already exists')) throw err;
    const existing = k8s.get(KINDS[kind].api, routeName(kind, n), cfg.namespace);
    const labels = (existing.metadata && existing.metadata.labels) || {};
    if (labels[ROUTE_LABEL] !== runLabel(cfg)) throw err;
    return false;
  }
}

// repointRoute(k8s, cfg, kind, n, backend): get, set the backend, update; retries on 409.
function repointRoute(k8s, cfg, kind, n, backend) {
  for (let attempt = 1; ; attempt++) {
    const obj = k8s.get(KINDS[kind].api, routeName(kind, n), cfg.namespace);
    setRouteBackend(obj, kind, backend);
    try {
      k8s.update(obj);
      return;
    } catch (err) {
      if (!isStatus(err, 409, 'the object has been modified') || attempt >= CONFLICT_RETRIES) throw err;
      sleep(0.05 * attempt);
    }
  }
}

// listLabelled(k8s, cfg, kind) -> [{name, run}] of the routes of that kind carrying ROUTE_LABEL.
function listLabelled(k8s, cfg, kind) {
  const out = [];
  for (const obj of k8s.list(KINDS[kind].api, cfg.namespace)) {
    const labels = (obj.metadata && obj.metadata.labels) || {};
    if (labels[ROUTE_LABEL] !== undefined) out.push({ name: obj.metadata.name, run: labels[ROUTE_LABEL] });
  }
  return out;
}

// deleteRoutes(pool, cfg, kinds, which): deletes the labelled routes `which(run label)` selects;
// returns how many. A route already gone is fine.
function deleteRoutes(pool, cfg, kinds, which) {
  let deleted = 0;
  for (const kind of kinds) {
    for (const r of listLabelled(pool.take(), cfg, kind)) {
      if (!which(r.run)) continue;
      try {
        pool.take().delete(KINDS[kind].api, r.name, cfg.namespace);
        deleted += 1;
      } catch (err) {
        if (!isStatus(err, 404, 'not found')) throw err;
      }
    }
  }
  return deleted;
}

function deleteOwnRoutes(pool, cfg, kinds) {
  const mine = runLabel(cfg);
  return deleteRoutes(pool, cfg, kinds, (run) => run === mine);
}

// deleteLeftRoutes: routes an earlier run left (its runner killed before teardown).
function deleteLeftRoutes(pool, cfg, kinds) {
  const mine = runLabel(cfg);
  return deleteRoutes(pool, cfg, kinds, (run) => run !== mine);
}

// describeRouteApiError: what the runner needs, for a failed route call.
function describeRouteApiError(cfg, what, err) {
  return `${what} failed using ${cfg.apiSource}: ${err}. The route experiments need create, get, update, delete and list `
    + `on httproutes.gateway.networking.k8s.io (BENCH_ROUTE_KIND httproute; the Gateway API v1.4.0 `
    + `standard-channel CRDs or later installed) or ingresses.networking.k8s.io (ingress) in namespace ${cfg.namespace} `
    + '(BENCH_NAMESPACE; scenarios/contract.json, runnerRole)';
}

// ---- probes through the data plane -------------------------------------------------------------

// routeBaseUrl(cfg, kind): where a kind's routes are served: the Gateway's data plane
// (BENCH_URL_GATEWAY) for HTTPRoutes, the ingress controller's (BENCH_URL_INGRESS) for Ingresses,
// else BENCH_TARGET_URL.
function routeBaseUrl(cfg, kind) {
  const own = kind === 'httproute' ? cfg.pathUrls.gateway : cfg.pathUrls.ingress;
  return own || cfg.targetUrl;
}

// routeRequest(cfg, kind, n, path, extra): one request to route n (its host in the Host header).
function routeRequest(cfg, kind, n, path, extra) {
  return {
    url: routeBaseUrl(cfg, kind) + path,
    keepalive: cfg.keepalive,
    params: Object.assign({ headers: { Host: routeHost(cfg, kind, n) }, timeout: `${cfg.timeoutMs}ms` }, extra || {}),
  };
}

// The probes of the routes VU: role=routes (not load), /healthz (200 from the backend, cheap),
// keep-alive (a new host on a listener needs no new connection).
function probeParams(cfg, kind, n) {
  return routeRequest(cfg, kind, n, '/healthz', {
    responseType: 'none',
    headers: { Host: routeHost(cfg, kind, n), 'User-Agent': 'bench-route-probe' },
  });
}

// RouteWatch: routes created and not yet serving; probe() sends one round of probes and records,
// per route, the ms from its create call to its first 200 (bench_route_propagation) and the
// answers before it (bench_route_pre_ready{status}).
class RouteWatch {
  constructor(cfg, kind) {
    this.cfg = cfg;
    this.kind = kind;
    this.tags = { kind };
    this.pending = new Map(); // n -> {createdAt, request}
    this.served = 0;
    this.statusTags = {};
    for (const s of PRE_READY_STATUSES) this.statusTags[s] = { kind, status: s };
  }

  created(n, createdAt) {
    const p = probeParams(this.cfg, this.kind, n);
    this.pending.set(n, { createdAt, request: ['GET', p.url, null, p.params] });
    routesCreated.add(1, this.tags);
  }

  // probe(limit): one request to each of up to `limit` pending routes (the longest unprobed first),
  // in parallel.
  probe(limit) {
    const batch = [];
    for (const [n, r] of this.pending) {
      batch.push([n, r]);
      if (batch.length >= (limit || PROBE_BATCH)) break;
    }
    if (batch.length === 0) return;
    matchServerName();
    const responses = http.batch(batch.map(([, r]) => r.request));
    const now = Date.now();
    responses.forEach((res, i) => {
      const [n, r] = batch[i];
      const bucket = preReadyBucket(res.status);
      if (bucket !== null) {
        routePreReady.add(1, this.statusTags[bucket]);
        this.pending.delete(n); // to the back of the queue: the next round probes the others first
        this.pending.set(n, r);
        return;
      }
      routePropagation.add(now - r.createdAt, this.tags);
      this.pending.delete(n);
      this.served += 1;
    });
  }

  // giveUp(now): routes past BENCH_ROUTE_TIMEOUT since their create call are unconverged.
  giveUp(now, all) {
    for (const [n, r] of this.pending) {
      if (all || now - r.createdAt >= this.cfg.routes.timeoutMs) {
        this.pending.delete(n);
        routesUnconverged.add(1, this.tags);
        console.warn(`routes: ${routeName(this.kind, n)} (${routeHost(this.cfg, this.kind, n)}) served no 200 within `
          + `${Math.round((now - r.createdAt) / 1000)} s of its create call`);
      }
    }
  }

  // waitAll(deadline): a round of up to PROBE_BATCH probes every PROBE_INTERVAL_MS until every
  // route served or the deadline (with more pending routes than that, each is probed every
  // pending / PROBE_BATCH rounds: the probes must not load the data plane they measure).
  waitAll(deadline, onRound) {
    while (this.pending.size > 0 && Date.now() < deadline) {
      const t = Date.now();
      this.probe(PROBE_BATCH);
      this.giveUp(Date.now(), false);
      if (onRound) onRound();
      const wait = PROBE_INTERVAL_MS - (Date.now() - t);
      if (wait > 0) sleep(wait / 1000);
    }
    this.giveUp(Date.now(), true);
  }
}

// ---- the three plans (each runs in the routes VU's single iteration) ----------------------------

// propagate(cfg, kind, endAt): route-propagation. Creates routes 1..N one after another, each
// BENCH_ROUTE_INTERVAL after the previous create (or once the previous one served, if later), and
// times each from its create call to its first 200.
function propagate(cfg, kind, endAt) {
  const k8s = connect(cfg);
  const watch = new RouteWatch(cfg, kind);
  for (let n = 1; n <= cfg.routes.count; n++) {
    if (Date.now() >= endAt) {
      console.warn(`routes: ${kind}: the load ended after ${n - 1} of ${cfg.routes.count} routes (raise BENCH_DURATION)`);
      break;
    }
    const createdAt = Date.now();
    createRoute(k8s, cfg, kind, n, cfg.routes.backends[0]);
    watch.created(n, createdAt);
    watch.waitAll(Math.min(createdAt + cfg.routes.timeoutMs, endAt));
    const wait = createdAt + cfg.routes.intervalMs - Date.now();
    if (wait > 0) sleep(wait / 1000);
  }
  return watch;
}

// scaleUp(cfg, kind, endAt, milestone): route-scale. Creates routes 1..N as fast as API_CLIENTS
// clients allow, probing the ones not serving yet between chunks, then until every route served.
// milestone(name, ms) receives applied, all_serving and after_last_apply.
function scaleUp(cfg, kind, endAt, milestone) {
  const pool = new ApiPool(cfg, API_CLIENTS);
  const watch = new RouteWatch(cfg, kind);
  const tags = { kind };
  const first = Date.now();
  for (let n = 1; n <= cfg.routes.count; n++) {
    const createdAt = Date.now();
    createRoute(pool.take(), cfg, kind, n, cfg.routes.backends[0]);
    watch.created(n, createdAt);
    if (n % PROBE_BATCH === 0) {
      watch.probe(PROBE_BATCH);
      routesServing.add(watch.served, tags);
    }
  }
  const applied = Date.now();
  milestone('applied', applied - first);
  watch.waitAll(Math.min(applied + cfg.routes.timeoutMs, endAt), () => routesServing.add(watch.served, tags));
  routesServing.add(watch.served, tags);
  if (watch.served === cfg.routes.count) {
    const done = Date.now();
    milestone('all_serving', done - first);
    milestone('after_last_apply', done - applied);
  }
  return watch;
}

// createAndWait(cfg, kinds, timeoutMs): route-change's setup: every route of every kind on the
// first backend, then probes until all serve. Returns {served, count}.
function createAndWait(cfg, kinds) {
  const pool = new ApiPool(cfg, API_CLIENTS);
  let served = 0;
  for (const kind of kinds) {
    const watch = new RouteWatch(cfg, kind);
    for (let n = 1; n <= cfg.routes.count; n++) {
      const createdAt = Date.now();
      createRoute(pool.take(), cfg, kind, n, cfg.routes.backends[0]);
      watch.created(n, createdAt);
    }
    watch.waitAll(Date.now() + cfg.routes.timeoutMs);
    served += watch.served;
  }
  return { served, count: kinds.length * cfg.routes.count };
}

// changeRoutes(cfg, kind, endAt, changed): route-change. Every BENCH_ROUTE_INTERVAL the next route
// (round robin) is repointed to the next Service of BENCH_ROUTE_BACKENDS while the load runs on all
// of them; changed() is called after each update.
function changeRoutes(cfg, kind, endAt, changed) {
  const k8s = connect(cfg);
  const backends = cfg.routes.backends;
  const generation = new Array(cfg.routes.count + 1).fill(0);
  for (let step = 0; Date.now() + cfg.routes.intervalMs <= endAt; step++) {
    const t = Date.now();
    const n = (step % cfg.routes.count) + 1;
    generation[n] += 1;
    repointRoute(k8s, cfg, kind, n, backends[generation[n] % backends.length]);
    changed(n);
    const wait = t + cfg.routes.intervalMs - Date.now();
    if (wait > 0) sleep(wait / 1000);
  }
}

module.exports = {
  ROUTE_LABEL,
  API_CLIENTS,
  PROBE_INTERVAL_MS,
  PROBE_BATCH,
  PRE_READY_STATUSES,
  routeName,
  routeHost,
  runLabel,
  preReadyBucket,
  buildRoute,
  ApiPool,
  createRoute,
  repointRoute,
  listLabelled,
  deleteRoutes,
  deleteOwnRoutes,
  deleteLeftRoutes,
  describeRouteApiError,
  routeBaseUrl,
  routeRequest,
  RouteWatch,
  propagate,
  scaleUp,
  createAndWait,
  changeRoutes,
};

// The shape the three route experiments share (route-propagation, route-change, route-scale): one
// phase per route kind (BENCH_ROUTE_KIND httproute, ingress, or both for the migration A/B, one
// phase after the other), each phase a constant-rate load scenario `load_<kind>` beside a 1-VU
// `routes_<kind>` scenario that creates or changes the routes (routes.js). The summary gets
// by_path.<kind> (the phase's load: requests, latency, errors) and `routes` (summary below).
'use strict';
const exec = require('k6/execution');
const { target, hit, loadScenario, baseOptions, checkTarget, gapMs } = require('./load.js');
const { summaryThresholds, singleTargetReport, makeHandleSummary } = require('./summary.js');
const { k6Duration } = require('./request.js');
const { startErrorSeries } = require('./errors.js');
const { checkRunnerMemory } = require('./memory-plan.js');
const { routeChanges, routeErrors, routeScale } = require('./route-metrics.js');
const {
  ApiPool, API_CLIENTS, PRE_READY_STATUSES, PROBE_INTERVAL_MS, ROUTE_LABEL, createAndWait, changeRoutes, deleteLeftRoutes,
  deleteOwnRoutes, describeRouteApiError, listLabelled, propagate, routeBaseUrl, routeHost, scaleUp,
} = require('./routes.js');

const SCALE_MILESTONES = ['applied', 'all_serving', 'after_last_apply'];
// After its phase's load, a routes VU still deletes what it created (route-propagation, route-scale).
const CLEANUP_MARGIN_MS = 120000;

function round(v, digits) {
  if (v === null || v === undefined || Number.isNaN(v)) return null;
  const f = Math.pow(10, digits === undefined ? 1 : digits);
  return Math.round(v * f) / f;
}

function metricValues(data, key) {
  const m = data.metrics[key];
  return m ? m.values : null;
}

function countOf(data, key) {
  const v = metricValues(data, key);
  return v ? v.count : 0;
}

// routeThresholds(kinds, thresholds): the always-true thresholds that make k6 report each
// sub-metric the summary reads.
function routeThresholds(kinds, t) {
  const add = (key, expr) => { t[key] = (t[key] || []).concat([expr]); };
  for (const kind of kinds) {
    add(`bench_route_propagation{kind:${kind}}`, 'max>=0');
    add(`bench_routes_created{kind:${kind}}`, 'count>=0');
    add(`bench_route_unconverged{kind:${kind}}`, 'count>=0');
    add(`bench_route_changes{kind:${kind}}`, 'count>=0');
    add(`bench_route_errors{kind:${kind}}`, 'count>=0');
    for (const s of PRE_READY_STATUSES) add(`bench_route_pre_ready{kind:${kind},status:${s}}`, 'count>=0');
    for (const m of SCALE_MILESTONES) add(`bench_route_scale{kind:${kind},milestone:${m}}`, 'max>=0');
  }
  return t;
}

// kindSummary(data, plan, kind, cfg): routes.by_kind.<kind> of the summary.
function kindSummary(data, plan, kind, cfg) {
  const p = metricValues(data, `bench_route_propagation{kind:${kind}}`);
  const created = countOf(data, `bench_routes_created{kind:${kind}}`);
  const unconverged = countOf(data, `bench_route_unconverged{kind:${kind}}`);
  const pre = {};
  for (const s of PRE_READY_STATUSES) pre[s] = countOf(data, `bench_route_pre_ready{kind:${kind},status:${s}}`);
  const non2xx = countOf(data, `bench_route_errors{kind:${kind}}`);
  const out = {
    created,
    serving: p ? p.count : 0,
    unconverged,
    propagation_ms: p && p.count
      ? { count: p.count, min: round(p.min), p50: round(p['p(50)']), p90: round(p['p(90)']), p99: round(p['p(99)']), max: round(p.max) }
      : { count: 0, min: null, p50: null, p90: null, p99: null, max: null },
    pre_ready_statuses: pre,
    load_non_2xx: non2xx,
    changes: plan === 'change' ? countOf(data, `bench_route_changes{kind:${kind}}`) : null,
    change_errors: plan === 'change' ? non2xx : null,
    scale_ms: null,
  };
  if (plan === 'scale') {
    out.scale_ms = {};
    for (const m of SCALE_MILESTONES) {
      const v = metricValues(data, `bench_route_scale{kind:${kind},milestone:${m}}`);
      out.scale_ms[m] = v && v.count ? round(v.max) : null;
    }
  }
  if (plan === 'change') out.serving = cfg.routes.count; // setup fails unless every route served
  return out;
}

// routeExperiment(name, cfg, plan): plan = propagation | change | scale.
function routeExperiment(name, cfg, plan) {
  const kinds = cfg.routes.kinds;
  if (plan === 'change' && cfg.routes.backends.length < 2) {
    throw new Error(`invalid BENCH_ROUTE_BACKENDS=${JSON.stringify(__ENV.BENCH_ROUTE_BACKENDS || '')}: `
      + 'route-change repoints routes between Services: expected at least two service:port pairs');
  }
  const phaseMs = cfg.durationMs + gapMs(cfg);
  const scenarios = {};
  const parts = [];
  kinds.forEach((kind, k) => {
    scenarios[`load_${kind}`] = loadScenario(cfg, {
      exec: 'load', rate: cfg.rate, durationMs: cfg.durationMs, startMs: k * phaseMs, tags: { kind },
    });
    scenarios[`routes_${kind}`] = {
      executor: 'per-vu-iterations',
      exec: 'routes',
      vus: 1,
      iterations: 1,
      startTime: k6Duration(k * phaseMs),
      maxDuration: k6Duration(cfg.durationMs + CLEANUP_MARGIN_MS),
      gracefulStop: '30s',
      tags: { role: 'routes', kind },
    };
    parts.push({ name: kind, scenario: `load_${kind}`, rateTarget: cfg.rate, durationMs: cfg.durationMs });
  });

  // The load: the base route (BENCH_TARGET_URL + BENCH_PATH) while routes are added
  // (propagation, scale: does adding routes disturb traffic already flowing?), or every live route
  // in turn (change: the routes being changed). Any non-2xx counts (bench_route_errors).
  const base = target(cfg, cfg.targetUrl, cfg.path, cfg.keepalive);
  const liveRoutes = {};
  if (plan === 'change') {
    for (const kind of kinds) {
      liveRoutes[kind] = [];
      for (let n = 1; n <= cfg.routes.count; n++) {
        liveRoutes[kind].push(target(cfg, routeBaseUrl(cfg, kind), cfg.path, cfg.keepalive, routeHost(cfg, kind, n)));
      }
    }
  }
  let turn = 0;

  const report = singleTargetReport(name, cfg, {
    targetUrl: plan === 'change' ? routeBaseUrl(cfg, kinds[0]) : cfg.targetUrl,
    durationMs: kinds.length * cfg.durationMs,
    parts,
    extend(data, summary) {
      const byKind = {};
      for (const kind of kinds) byKind[kind] = kindSummary(data, plan, kind, cfg);
      summary.routes = {
        experiment: plan,
        kind: cfg.routes.kindText,
        count: cfg.routes.count,
        interval_ms: plan === 'scale' ? null : cfg.routes.intervalMs,
        timeout_ms: cfg.routes.timeoutMs,
        probe_interval_ms: PROBE_INTERVAL_MS,
        api_clients: plan === 'propagation' ? 1 : API_CLIENTS,
        backends: cfg.routes.backends.map((b) => `${b.name}:${b.port}`),
        label: ROUTE_LABEL,
        by_kind: byKind,
      };
    },
  });

  const thresholds = routeThresholds(kinds, summaryThresholds(report, { dropped_iterations: ['count==0'] }));
  // route-change passes only with zero non-2xx answers while routes change (exit 99 otherwise).
  if (plan === 'change') thresholds.bench_route_errors = ['count==0'];
  const options = baseOptions(report, scenarios, thresholds);
  // setup() may create and wait for every route (change), teardown deletes them.
  const apiBudgetMs = 60000 + cfg.readyTimeoutMs + cfg.routes.timeoutMs * kinds.length + 100 * cfg.routes.count * kinds.length;
  options.setupTimeout = k6Duration(apiBudgetMs);
  options.teardownTimeout = k6Duration(apiBudgetMs);

  function withApi(what, fn) {
    try {
      return fn();
    } catch (err) {
      throw new Error(describeRouteApiError(cfg, what, err));
    }
  }

  return {
    options,
    setup() {
      checkRunnerMemory();
      const pool = withApi('connecting to the API', () => new ApiPool(cfg, API_CLIENTS));
      for (const kind of kinds) withApi(`listing ${kind}s in ${cfg.namespace}`, () => listLabelled(pool.take(), cfg, kind));
      const left = withApi('deleting routes an earlier run left', () => deleteLeftRoutes(pool, cfg, kinds));
      if (left > 0) console.log(`routes: setup: deleted ${left} route(s) an earlier run left (label ${ROUTE_LABEL})`);
      if (plan !== 'change') {
        checkTarget(base, 'BENCH_TARGET_URL + BENCH_PATH', cfg);
      } else {
        startErrorSeries(); // (checkTarget does it in the other plans; the base route is not used here)
        const r = withApi('creating the routes', () => createAndWait(cfg, kinds));
        if (r.served < r.count) {
          withApi('deleting the routes', () => deleteOwnRoutes(new ApiPool(cfg, API_CLIENTS), cfg, kinds));
          throw new Error(`route-change: only ${r.served} of ${r.count} routes served a 200 within BENCH_ROUTE_TIMEOUT `
            + `(${cfg.routes.timeoutMs} ms) of their create call; is the controller watching them (Gateway `
            + `${cfg.gateway.namespace}/${cfg.gateway.name}, BENCH_URL_GATEWAY / BENCH_URL_INGRESS)?`);
        }
        console.log(`routes: setup: ${r.served} routes serving, changes start with the load`);
      }
      return { startedAt: Date.now() };
    },
    load() {
      const kind = exec.scenario.name.slice('load_'.length);
      const list = liveRoutes[kind]; // undefined for the runner_lag VUs (hit samples the lag instead)
      let status;
      if (list) {
        turn = (turn + 1) % list.length;
        status = hit(list[(turn + exec.vu.idInTest) % list.length]);
      } else {
        status = hit(base);
      }
      if (status !== null && (status < 200 || status >= 300)) routeErrors.add(1);
    },
    routes() {
      const kind = exec.scenario.name.slice('routes_'.length);
      const endAt = Date.now() + cfg.durationMs;
      try {
        if (plan === 'propagation') {
          const w = propagate(cfg, kind, endAt);
          console.log(`routes: ${kind}: ${w.served} routes served`);
        } else if (plan === 'scale') {
          const w = scaleUp(cfg, kind, endAt, (m, ms) => routeScale.add(ms, { kind, milestone: m }));
          console.log(`routes: ${kind}: ${w.served} of ${cfg.routes.count} routes served`);
        } else {
          changeRoutes(cfg, kind, endAt, () => routeChanges.add(1, { kind }));
        }
      } catch (err) {
        const msg = describeRouteApiError(cfg, `${plan} of ${kind}s`, err);
        console.error(msg);
        exec.test.abort(msg);
      }
      if (plan !== 'change') {
        // The next phase (or run) starts without this phase's routes; teardown retries on failure.
        try {
          const n = deleteOwnRoutes(new ApiPool(cfg, API_CLIENTS), cfg, [kind]);
          console.log(`routes: ${kind}: deleted the ${n} route(s) this phase created`);
        } catch (err) {
          console.warn(`routes: could not delete this phase's routes (teardown will): ${err}`);
        }
      }
    },
    // Every end k6 survives deletes what this run created; a killed runner leaves its routes to the
    // next run's setup (label ROUTE_LABEL, another run id).
    teardown() {
      try {
        const n = deleteOwnRoutes(new ApiPool(cfg, API_CLIENTS), cfg, kinds);
        if (n > 0) console.log(`routes: teardown: deleted ${n} route(s) of this run`);
      } catch (err) {
        console.warn(`routes: teardown could not delete this run's routes (the next run's setup will): `
          + `${describeRouteApiError(cfg, 'deleting', err)}`);
      }
    },
    handleSummary: makeHandleSummary(report),
  };
}

module.exports = {
  routeExperiment,
};

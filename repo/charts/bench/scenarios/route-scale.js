// route-scale: many routes at once; how long until all serve, and what it costs the controller.
// Reproduces: the thousands-of-routes test of howardjohn/gateway-api-bench and NGINX Gateway
//   Fabric's 1,000-route scale test (the controller's CPU and memory over the run: Prometheus,
//   the controllers dashboard).
// Load: BENCH_RATE req/s on the base route (BENCH_TARGET_URL + BENCH_PATH) for BENCH_DURATION, as
//   static.js: does the controller keep serving existing routes while it takes the new ones?
// Routes: a 1-VU scenario creates BENCH_ROUTE_COUNT routes (default 1000) as fast as its API
//   clients allow (10 clients in turn, about kubectl's 50 requests/s), probing the ones not serving
//   yet between chunks of 20, then 20 of them every 20 ms until all serve or BENCH_ROUTE_TIMEOUT after the
//   last create. Result: routes.by_kind.<kind>.scale_ms (applied, all_serving, after_last_apply),
//   serving / unconverged, propagation_ms per route; bench_routes_serving over time. The routes
//   are deleted at the end. BENCH_ROUTE_KIND both: HTTPRoutes, then Ingresses.
// Thresholds: no dropped iterations.
import { runConfig } from './lib/run-config.js';
import { routeExperiment } from './lib/route-experiment.js';

const experiment = routeExperiment('route-scale', runConfig(__ENV, { BENCH_ROUTE_COUNT: '1000' }), 'scale');

export const options = experiment.options;
export const setup = experiment.setup;
export const load = experiment.load;
export const routes = experiment.routes;
export const teardown = experiment.teardown;
export const handleSummary = experiment.handleSummary;

// route-propagation: how long a new route takes to serve, per route, while traffic flows.
// Reproduces: the route-propagation test of howardjohn/gateway-api-bench and the vendors'
//   "reconfiguration time": apply an HTTPRoute, time its first 200 through the data plane.
// Load: BENCH_RATE req/s on the base route (BENCH_TARGET_URL + BENCH_PATH) for BENCH_DURATION, as
//   static.js: does adding routes disturb traffic already flowing? (by_path.<kind>, non-2xx counted).
// Routes: a 1-VU scenario creates BENCH_ROUTE_COUNT routes (default 20) one after another, each
//   BENCH_ROUTE_INTERVAL (2s) after the previous create, or once the previous one served if later:
//   HTTPRoutes attached to Gateway BENCH_GATEWAY_NAME, or Ingresses (BENCH_ROUTE_KIND; `both` runs the
//   migration A/B: the same experiment with HTTPRoutes, then with Ingresses). Route n answers on its
//   own host; it is probed every 20 ms from its create call until its first 200 (lib/routes.js).
//   Result per kind: routes.by_kind.<kind>.propagation_ms (count, min, p50, p90, p99, max) and the
//   answers before the 200 (pre_ready_statuses: 404, 503, ...). The routes are deleted at the end.
// Thresholds: no dropped iterations.
import { runConfig } from './lib/run-config.js';
import { routeExperiment } from './lib/route-experiment.js';

const experiment = routeExperiment('route-propagation', runConfig(__ENV), 'propagation');

export const options = experiment.options;
export const setup = experiment.setup;
export const load = experiment.load;
export const routes = experiment.routes;
export const teardown = experiment.teardown;
export const handleSummary = experiment.handleSummary;

// The route experiments' metrics (scenarios/interfaces.md; the rest are in metrics.js). Only the
// route-* entry scripts load this module (routes.js, route-experiment.js), so other experiments'
// VUs do not carry these objects. Remote write adds k6_, _total and _seconds as for metrics.js.
'use strict';
const { Counter, Gauge, Trend } = require('k6/metrics');

// Route experiments (routes.js), every one tagged kind = httproute | ingress:
// ms from a route's create call to its first 200 through the data plane;
const routePropagation = new Trend('bench_route_propagation', true);
// probe answers before that first 200, tag status = 404 | 503 | other_4xx | other_5xx | 3xx | no_response;
const routePreReady = new Counter('bench_route_pre_ready');
// routes created, and routes that never served within BENCH_ROUTE_TIMEOUT;
const routesCreated = new Counter('bench_routes_created');
const routesUnconverged = new Counter('bench_route_unconverged');
// routes serving 200 right now (route-scale, polled) and live route changes made (route-change);
const routesServing = new Gauge('bench_routes_serving');
const routeChanges = new Counter('bench_route_changes');
// load responses that were not 2xx (route experiments: any non-2xx fails, redirects included).
const routeErrors = new Counter('bench_route_errors');
// route-scale's milestones in ms, one sample each, tag milestone = applied (first create -> last
// create returned), all_serving (first create -> every route served a 200), after_last_apply (last
// create -> all served); no sample when not every route served.
const routeScale = new Trend('bench_route_scale', true);

module.exports = {
  routePropagation,
  routePreReady,
  routesCreated,
  routesUnconverged,
  routesServing,
  routeChanges,
  routeErrors,
  routeScale,
};

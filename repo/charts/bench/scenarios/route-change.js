// route-change: live routes changed under traffic; every non-2xx answer is an error, zero passes.
// Reproduces: the route-change test of howardjohn/gateway-api-bench and NGINX Gateway Fabric's
//   zero-downtime reconfiguration: repoint routes while requests flow through them.
// Setup: creates BENCH_ROUTE_COUNT routes (default 10) on the first Service of BENCH_ROUTE_BACKENDS
//   and waits until every one serves a 200 (else the run stops and deletes them).
// Load: BENCH_RATE req/s spread over those routes (each on its own host) for BENCH_DURATION.
// Changes: a 1-VU scenario repoints the next route (round robin) to the next Service of
//   BENCH_ROUTE_BACKENDS (at least two, all serving the backend) every BENCH_ROUTE_INTERVAL (1s):
//   get, set the backendRef, update (retried on 409). BENCH_ROUTE_KIND both runs it with HTTPRoutes,
//   then with Ingresses (the migration A/B). Result: routes.by_kind.<kind>.change_errors and changes.
// Thresholds: no dropped iterations; bench_route_errors count==0 (exit 99 on any non-2xx).
import { runConfig } from './lib/run-config.js';
import { routeExperiment } from './lib/route-experiment.js';

const experiment = routeExperiment('route-change', runConfig(__ENV, { BENCH_ROUTE_COUNT: '10', BENCH_ROUTE_INTERVAL: '1s' }),
  'change');

export const options = experiment.options;
export const setup = experiment.setup;
export const load = experiment.load;
export const routes = experiment.routes;
export const teardown = experiment.teardown;
export const handleSummary = experiment.handleSummary;

// Every custom metric bench emits (README "Interfaces"). Defined in one module that every entry
// script loads (through summary.js), so the summary's sub-metric thresholds always find them.
// Remote write adds the k6_ prefix, _total to counters and _seconds to time trends.
import { Counter, Gauge, Trend } from 'k6/metrics';

// Failed requests by class (errors.js): connection, timeout, read, http_5xx, http_4xx, other.
export const errors = new Counter('bench_errors');
// Endpoint convergence in ms (convergence.js), tag event = added | removed.
export const convergence = new Trend('bench_endpoint_convergence', true);
// The backend Deployment's spec.replicas and status.readyReplicas, as the churn VU polls them.
export const replicasDesired = new Gauge('bench_replicas_desired');
export const replicasReady = new Gauge('bench_replicas_ready');
// One per change the churn VU makes, tag action = scale | rollout | podkill.
export const scaleEvents = new Counter('bench_scale_events');
// How late (ms) a sleeping VU of the runner_lag scenario woke up (lag.js): the runner's own CPU
// starvation. Tag role=lag only (plus run tags).
export const runnerLag = new Trend('bench_runner_lag', true);
// The Go runtime's witnesses of the runner's own pauses, since the runner started (k6/x/bench
// runtimeStats, sent by the lag VUs every few seconds): p99 of the time ready goroutines waited for
// a CPU, in ms, and the garbage collector's share of the CPU the runner used (0-1).
export const runnerSchedP99 = new Gauge('bench_runner_sched_p99_ms');
export const runnerGcCpu = new Gauge('bench_runner_gc_cpu_ratio');
// Route experiments (routes.js), every one tagged kind = httproute | ingress:
// ms from a route's create call to its first 200 through the data plane;
export const routePropagation = new Trend('bench_route_propagation', true);
// probe answers before that first 200, tag status = 404 | 503 | other_4xx | other_5xx | 3xx | no_response;
export const routePreReady = new Counter('bench_route_pre_ready');
// routes created, and routes that never served within BENCH_ROUTE_TIMEOUT;
export const routesCreated = new Counter('bench_routes_created');
export const routesUnconverged = new Counter('bench_route_unconverged');
// routes serving 200 right now (route-scale, polled) and live route changes made (route-change);
export const routesServing = new Gauge('bench_routes_serving');
export const routeChanges = new Counter('bench_route_changes');
// load responses that were not 2xx (route experiments: any non-2xx fails, redirects included).
export const routeErrors = new Counter('bench_route_errors');
// route-scale's milestones in ms, one sample each, tag milestone = applied (first create -> last
// create returned), all_serving (first create -> every route served a 200), after_last_apply (last
// create -> all served); no sample when not every route served.
export const routeScale = new Trend('bench_route_scale', true);

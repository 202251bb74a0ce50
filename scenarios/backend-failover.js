// backend-failover: one backend endpoint flaps between healthy and unhealthy under constant load.
// Reproduces: gateway-api-bench Part 2's backend failover: one backend flapping under load, the
//   errors that reach clients counted per implementation (there, one masked the failures by
//   retrying with retries off, another ejected the endpoint only after 5 x routes consecutive
//   errors).
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive).
// Churn: none by bench. The chart's flapping backend pod (loadtest.backendFailover: the backend's
//   labels plus bench/flapping=true, so the Services select it) is unhealthy for
//   BENCH_FAILOVER_UNHEALTHY, then healthy for BENCH_FAILOVER_HEALTHY, over and over. Mode errors: it
//   answers 503 on every path but /healthz (its readiness stays good: only the controller's passive
//   health checks, retries or ejection can hide it); mode close: those paths get no answer, the
//   connection closed once the request is in (nginx 444: the proxy's upstream closed it before a
//   response); mode readiness: 503 on /healthz alone (the kubelet takes it out, the controller must
//   follow the EndpointSlice). The churn VU polls the pod straight on the mode's path
//   (lib/failover-poll.js) and records each flip as an event
//   (bench_scale_events{action=backend_unhealthy|backend_healthy}) the report attributes errors to;
//   per flap how long it failed and, in readiness mode, until the API showed it not Ready (summary
//   backend_failover).
// Thresholds: no dropped iterations, and the gate on the load's failed requests: readiness mode none
//   (exit 99 on any error), modes errors and close at most BENCH_FAILOVER_ERRORS_PER_FLAP per flap
//   the run can overlap (lib/failover.js gateMaxErrors says why).
import { experiment } from './lib/churn-experiment.js';
import { MODES, runBudget } from './lib/failover.js';
import { failoverChurn } from './lib/failover-poll.js';

export const { options, setup, load, churn, teardown, handleSummary } = experiment({
  name: 'backend-failover',
  settings: {
    BENCH_FAILOVER_MODE: { type: 'oneOf', default: 'errors', values: MODES },
    BENCH_FAILOVER_UNHEALTHY: { type: 'duration', default: '5s' }, // the pod's schedule (the chart's values)
    BENCH_FAILOVER_HEALTHY: { type: 'duration', default: '10s' },
    BENCH_FAILOVER_PORT: { type: 'count', default: '8080', max: 65535 }, // the backend's container port
    // modes errors and close: the budget; Envoy's outlier detection ejects after 5 consecutive 5xx by default
    BENCH_FAILOVER_ERRORS_PER_FLAP: { type: 'count', default: '5', max: 1000000 },
  },
  thresholds: (cfg) => ({ 'bench_errors{role:load}': [`count<=${runBudget(cfg)}`] }),
  summary: (cfg) => ({
    backendFailover: {
      mode: cfg.settings.BENCH_FAILOVER_MODE,
      unhealthyMs: cfg.settings.BENCH_FAILOVER_UNHEALTHY,
      healthyMs: cfg.settings.BENCH_FAILOVER_HEALTHY,
      perFlap: cfg.settings.BENCH_FAILOVER_ERRORS_PER_FLAP,
      maxErrors: runBudget(cfg),
    },
  }),
  churn: failoverChurn,
});

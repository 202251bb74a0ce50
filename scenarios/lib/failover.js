// Backend-failover bookkeeping (pure: no k6 imports, unit-tested directly). The chart's flapping
// backend pod (loadtest.backendFailover; label FLAPPING_LABEL) makes itself unhealthy and healthy
// again on its own schedule; the churn VU (failover-poll.js) watches it two ways and feeds:
//   answered(status, t)  one GET straight to the pod's IP on the mode's path (errors: BENCH_PATH,
//                        readiness: /healthz): 503 = unhealthy, 2xx-4xx = healthy, 0/other = unknown
//   podReady(ready, t)   the pod's Ready condition as the API lists it (what the EndpointSlices follow)
// Transitions come back from answered() as the event to record (bench_scale_events{action}):
//   backend_unhealthy  the pod started answering 503 (a flap begins)
//   backend_healthy    it answers again (the flap ends)
// and each finished flap from take(): {unhealthy_ms, not_ready_ms}: how long the pod answered 503,
// and (readiness mode) ms from the flip until the API showed it not Ready (null: never, in errors
// mode by design). The kubelet may mark it not Ready after the flag is gone (its probe fails
// failureThreshold times, periodSeconds apart), so a flap is taken only when the next one begins or
// the run ends. The errors the load saw in each flap come from Prometheus (the report's errors
// by event), since the churn VU cannot see the load VUs' requests.
'use strict';
const FLAPPING_LABEL = 'bench/flapping';
const MODES = ['errors', 'readiness'];
const ACTIONS = ['backend_unhealthy', 'backend_healthy'];

function newFailoverTracker() {
  class FailoverTracker {
    constructor() {
      this.state = null; // 'healthy' | 'unhealthy' | null (not known yet)
      this.open = null;
      this.done = [];
      this.flaps = 0;
    }

    // answered(status, t) -> 'backend_unhealthy' | 'backend_healthy' | null (no transition). The
    // first answer only sets the state: a pod already unhealthy when the run starts is a flap
    // whose start the run did not see.
    answered(status, t) {
      let now = null;
      if (status === 503) now = 'unhealthy';
      else if (status >= 200 && status < 500) now = 'healthy';
      if (now === null || now === this.state) return null;
      const was = this.state;
      this.state = now;
      if (was === null) return null;
      if (now === 'unhealthy') {
        this.close();
        this.flaps += 1;
        this.open = { t0: t, endedAt: null, notReadyAt: null };
        return 'backend_unhealthy';
      }
      if (this.open) this.open.endedAt = t;
      return 'backend_healthy';
    }

    podReady(ready, t) {
      if (this.open && !ready && this.open.notReadyAt === null) this.open.notReadyAt = t;
    }

    // close(): the last flap is done; one that never ended (the run's end came first) has no record.
    close() {
      const f = this.open;
      this.open = null;
      if (!f || f.endedAt === null) return;
      this.done.push({ unhealthy_ms: f.endedAt - f.t0, not_ready_ms: f.notReadyAt === null ? null : f.notReadyAt - f.t0 });
    }

    finish() {
      this.close();
    }

    take() {
      const out = this.done;
      this.done = [];
      return out;
    }
  }
  return new FailoverTracker();
}

// pollPath(mode, path): the path that answers 503 while the pod is unhealthy (charts/bench/files/
// backend/flap.conf is put in that mode's locations of nginx.conf).
function pollPath(mode, path) {
  if (!MODES.includes(mode)) throw new Error(`backend-failover mode ${JSON.stringify(mode)}: expected errors or readiness`);
  return mode === 'readiness' ? '/healthz' : path;
}

// flapWindows(durationMs, unhealthyMs, healthyMs): the most unhealthy windows a run of durationMs can
// overlap: the pod's schedule started before the run, so a window may be cut at either end.
function flapWindows(durationMs, unhealthyMs, healthyMs) {
  return Math.ceil((durationMs + unhealthyMs) / (unhealthyMs + healthyMs));
}

// gateMaxErrors(mode, perFlap, windows): the verdict's error budget. readiness: the flag fails
// /healthz alone, so the pod serves the load with 200 before, while and after the kubelet takes it
// out: no request has to fail, and the gate is zero errors, as the other churn experiments'.
// errors: the pod answers 503 until something stops sending to it, and a controller can learn that
// only from the errors themselves (passive health checks eject after a run of 5xx: Envoy's default
// is 5), so the gate is a budget of perFlap errors per window the run can overlap.
function gateMaxErrors(mode, perFlap, windows) {
  return mode === 'readiness' ? 0 : perFlap * windows;
}

// runBudget(cfg): the run's gate, from its settings (scenarios/backend-failover.js declares them).
function runBudget(cfg) {
  const s = cfg.settings;
  const windows = flapWindows(cfg.durationMs, s.BENCH_FAILOVER_UNHEALTHY, s.BENCH_FAILOVER_HEALTHY);
  return gateMaxErrors(s.BENCH_FAILOVER_MODE, s.BENCH_FAILOVER_ERRORS_PER_FLAP, windows);
}

module.exports = {
  ACTIONS,
  FLAPPING_LABEL,
  MODES,
  flapWindows,
  gateMaxErrors,
  newFailoverTracker,
  pollPath,
  runBudget,
};

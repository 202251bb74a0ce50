// Backend-failover bookkeeping (pure: no k6 imports, unit-tested directly). The chart's flapping
// backend pod (loadtest.backendFailover; label FLAPPING_LABEL) makes itself unhealthy and healthy
// again on its own schedule; the churn VU (failover-poll.js) watches it two ways and feeds:
//   answered(status, t, errorClass)  one GET straight to the pod's IP on the mode's path (errors and
//                        close: BENCH_PATH, readiness: /healthz): unhealthy is the mode's failure
//                        (unhealthyAnswer: a 503, or in close mode no answer, the connection closed
//                        after the request: error class read), 2xx-4xx = healthy, anything else unknown
//   podReady(ready, t)   the pod's Ready condition as the API lists it (what the EndpointSlices follow)
// Transitions come back from answered() as the event to record (bench_scale_events{action}):
//   backend_unhealthy  the pod started answering 503 (a flap begins)
//   backend_healthy    it answers again (the flap ends)
// and each finished flap from take(): {unhealthy_ms, not_ready_ms}: how long the pod failed,
// and (readiness mode) ms from the flip until the API showed it not Ready (null: never, in errors
// mode by design). The kubelet may mark it not Ready after the flag is gone (its probe fails
// failureThreshold times, periodSeconds apart), so a flap is taken only when the next one begins or
// the run ends. The errors the load saw in each flap come from Prometheus (the report's errors
// by event), since the churn VU cannot see the load VUs' requests.
'use strict';
const FLAPPING_LABEL = 'bench/flapping';
const MODES = ['errors', 'readiness', 'close'];
const ACTIONS = ['backend_unhealthy', 'backend_healthy'];
// the summary table's words for a flap's unhealthy time, per mode
const UNHEALTHY_ROW = { errors: 'answering 503', readiness: 'answering 503 on /healthz', close: 'closing connections unanswered' };

// unhealthyAnswer(mode, status, errorClass): whether one poll got the flapping pod's unhealthy answer
// (charts/bench/files/backend/flap.conf): a 503 in modes errors and readiness; in mode close no
// answer at all, nginx's 444 closing the connection once the request is in (errors.js class read:
// an EOF, or a reset when the kernel saw unread bytes). A timeout or a refused dial is neither.
function unhealthyAnswer(mode, status, errorClass) {
  if (mode === 'close') return status === 0 && errorClass === 'read';
  return status === 503;
}

// newFailoverTracker(mode): mode as BENCH_FAILOVER_MODE (default errors).
function newFailoverTracker(mode) {
  const m = mode || 'errors';
  pollPath(m, '/'); // refuses an unknown mode
  class FailoverTracker {
    constructor() {
      this.state = null; // 'healthy' | 'unhealthy' | null (not known yet)
      this.open = null;
      this.done = [];
      this.flaps = 0;
    }

    // answered(status, t, errorClass) -> 'backend_unhealthy' | 'backend_healthy' | null (no
    // transition). The first answer only sets the state: a pod already unhealthy when the run
    // starts is a flap whose start the run did not see.
    answered(status, t, errorClass) {
      let now = null;
      if (unhealthyAnswer(m, status, errorClass)) now = 'unhealthy';
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

// pollPath(mode, path): the path that fails while the pod is unhealthy (the mode's line of
// charts/bench/files/backend/flap.conf is put in those locations of nginx.conf).
function pollPath(mode, path) {
  if (!MODES.includes(mode)) {
    throw new Error(`backend-failover mode ${JSON.stringify(mode)}: expected one of ${MODES.join(', ')}`);
  }
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
// errors and close: the pod answers 503 (or closes the connection unanswered) until something stops
// sending to it, and a controller can learn that only from the failures themselves (passive health
// checks eject after a run of 5xx or connection failures: Envoy's default is 5), so the gate is a
// budget of perFlap errors per window the run can overlap.
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
  UNHEALTHY_ROW,
  flapWindows,
  gateMaxErrors,
  newFailoverTracker,
  pollPath,
  runBudget,
  unhealthyAnswer,
};

// backend-failover's churn function (scenarios/backend-failover.js): bench changes nothing, the
// flapping pod flips itself (charts/bench/files/backend/flap.sh); this watches it and records each
// flip. Between the churn's holds (each a round of bench's own probes and API polls), it GETs the
// mode's path straight from the pod's IP on the pod network, as the pod target does, and lists the
// pod through the API for its IP and Ready condition (the rights every churn run has: list pods).
// Only backend-failover runs load this module, and with it k6's http module.
'use strict';
const http = require('k6/http');
const { failoverBudget, failoverFlap } = require('./churn-metrics.js');
const { classifyError } = require('./errors.js');
const { FLAPPING_LABEL, newFailoverTracker, pollPath, runBudget } = require('./failover.js');
const { kubeCalls } = require('./kube.js');

const POLL_MS = 100; // a flip is dated to about this (plus one probe round of bench's)
const LIST_MS = 500; // the pod's IP and Ready condition
const MEASURE_TAGS = { unhealthy: { measure: 'unhealthy' }, not_ready: { measure: 'not_ready' } };
// 503 is the flag's answer, not a failure of the poll: neither counts in http_req_failed (mode close's
// unanswered requests do: k6 has no expected status for no answer; no bench figure reads it)
const EXPECTED = http.expectedStatuses({ min: 200, max: 499 }, 503);

function failoverChurn(k8s, t) {
  const { isPodReady, matchesLabels } = kubeCalls();
  const cfg = t.cfg;
  const s = t.settings;
  const path = pollPath(s.BENCH_FAILOVER_MODE, cfg.path);
  const tracker = newFailoverTracker(s.BENCH_FAILOVER_MODE);
  const params = { timeout: '1s', responseCallback: EXPECTED, tags: { name: 'failover-poll' } };
  let pod = null;
  let listedAt = 0;
  failoverBudget.add(runBudget(cfg), { mode: s.BENCH_FAILOVER_MODE });

  function list() {
    const found = k8s.list('Pod', cfg.namespace).filter((p) => matchesLabels(p, { [FLAPPING_LABEL]: 'true' })
      && !p.metadata.deletionTimestamp);
    if (found.length !== 1) {
      throw new Error(`backend-failover: ${found.length} pods labelled ${FLAPPING_LABEL}=true in namespace `
        + `${cfg.namespace}, expected 1: install the chart with loadtest.scenario backend-failover (it adds the flapping pod)`);
    }
    return found[0];
  }

  function emit() {
    for (const f of tracker.take()) {
      failoverFlap.add(f.unhealthy_ms, MEASURE_TAGS.unhealthy);
      if (f.not_ready_ms !== null) failoverFlap.add(f.not_ready_ms, MEASURE_TAGS.not_ready);
    }
  }

  function poll() {
    if (Date.now() - listedAt >= LIST_MS) {
      pod = list();
      listedAt = Date.now();
      tracker.podReady(isPodReady(pod), listedAt);
    }
    const ip = pod.status && pod.status.podIP;
    if (!ip) return;
    const host = ip.includes(':') ? `[${ip}]` : ip;
    const res = http.get(`http://${host}:${s.BENCH_FAILOVER_PORT}${path}`, params);
    const failed = res.error_code ? classifyError(res.status, res.error_code, res.error,
      res.timings.sending > 0 || res.timings.waiting > 0, false) : null;
    const action = tracker.answered(res.status, Date.now(), failed && failed.class);
    if (action) t.mark(action, `pod ${pod.metadata.name}`);
    emit();
  }

  try {
    for (;;) {
      poll();
      t.hold(POLL_MS);
    }
  } finally {
    tracker.finish();
    emit();
  }
}

module.exports = {
  failoverChurn,
};

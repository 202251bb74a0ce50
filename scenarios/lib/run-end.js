// The end-of-run record (scenarios/contract.json runEnd), built from this runner's summary and sent
// by bench's extension after the summary (scenarios/runner/xk6-bench/runend.go). k6's remote-write
// output sends each push once; when its last push fails, the final counters never reach Prometheus.
// The record carries them again, retried until Prometheus acknowledges it or RUN_END_TIMEOUT_MS
// passes, so `make results` can check this runner's series against it. Loaded by the summary writer
// (VU 0) only.
'use strict';
const bench = require('k6/x/bench');
const { ERROR_CLASSES } = require('./errors.js');

// How long the runner keeps trying: longer than a Prometheus restart or a short network cut, short
// enough that the runner prints its summary within the liveness probe's patience (the chart's 90 s,
// templates/loadtest/_pod.tpl, from the test's end: k6's last push takes up to its 5 s timeout and an
// attempt at most 10 s).
const RUN_END_TIMEOUT_MS = 45000;

// runEndFields(summary): {field: number} of the record (runEnd.fields), from this runner's summary.
function runEndFields(s) {
  const f = {
    requests: s.requests.total,
    dropped_iterations: s.requests.dropped_iterations,
    bytes_received: s.throughput.bytes_received,
    warmup_requests: s.requests.warmup_requests || 0,
    scale_events: s.scale_events,
  };
  for (const cls of ERROR_CLASSES) {
    f[`errors.${cls}`] = s.errors[cls];
    const causes = s.error_causes[cls] || {};
    for (const cause of Object.keys(causes)) f[`causes.${cls}.${cause}`] = causes[cause];
  }
  for (const key of Object.keys(s.latency_ms)) {
    if (s.latency_ms[key] !== null) f[`latency.${key}`] = s.latency_ms[key];
  }
  return f;
}

// sendRunEnd(summary, runTags): sends the record with the run's tags (testid, instance_id, ...) and
// returns the summary's end_record ({delivered, attempts, error, instance_id}; null without remote
// write). A record that did not arrive is logged as an error: the merge will lack this runner's totals.
function sendRunEnd(s, runTags) {
  const labels = Object.assign({}, runTags || {});
  if (!labels.testid && s.testid) labels.testid = s.testid;
  const sent = bench.sendRunEnd(runEndFields(s), labels, RUN_END_TIMEOUT_MS);
  if (!sent.configured) return null;
  const record = {
    delivered: sent.delivered,
    attempts: sent.attempts,
    error: sent.error || null,
    instance_id: labels.instance_id === undefined ? null : String(labels.instance_id),
  };
  if (!record.delivered) {
    console.error(`bench: the end-of-run record of runner ${record.instance_id || '(untagged)'} did not reach `
      + `Prometheus (${record.attempts} attempts: ${record.error}); make results will mark run ${s.testid} `
      + 'incomplete unless every final push of this runner arrived');
  }
  return record;
}

module.exports = { RUN_END_TIMEOUT_MS, runEndFields, sendRunEnd };

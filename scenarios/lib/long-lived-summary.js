// long-lived's summary section (summary key long_lived; scenarios/contract.json summarySchema) and
// its gate (summary-writer.js, in VU 0); no k6 module, so long-lived.js takes KINDS and CAUSES from here.
//
// Gate: no stream broken by the path (cause reset), and no failed short request (the zero-error gate
// of controller-restart and the others). Why those two: a controller that reloads or restarts
// without dropping what it carries is what "zero downtime" means for streams too (NGINX Gateway
// Fabric's and the anchors' zero-downtime tests count any failed request); a stream the stream
// backend itself ended on its way down (backend_stop: a pod the backend disruption removed) is the
// backend's doing, not the controller's, and the client's reconnect is the expected cure, so it is
// counted and shown but passes. Messages lost and streams that could not be opened are shown, not
// gated: a reconnect after a backend_stop misses the slots of its own round trip, and a reconnect
// may meet a backend pod that is stopping before the controller has dropped it.
'use strict';

// The kinds of stream and the causes of a break (long-lived.js says what each means).
const KINDS = ['http', 'websocket', 'grpc'];
const CAUSES = ['backend_stop', 'reset'];

function round1(v) {
  return v === null || v === undefined ? null : Math.round(v * 10) / 10;
}

function count(data, key) {
  const m = data.metrics[key];
  return m ? m.values.count : 0;
}

function countP50Max(data, key) {
  const m = data.metrics[key];
  const v = m ? m.values : null;
  if (!v || !v.count) return { count: 0, p50: null, max: null };
  return { count: v.count, p50: round1(v['p(50)']), max: round1(v.max) };
}

// thresholds(cfg): the gate and the sub-metrics the section reads (k6 computes a sub-metric only
// when a threshold names it).
function thresholds(cfg) {
  const t = { 'bench_errors{role:load}': ['count==0'], 'bench_streams_broken{cause:reset}': ['count==0'] };
  for (const kind of cfg.settings.BENCH_LONGLIVED_KINDS) {
    for (const m of ['bench_streams_opened', 'bench_stream_open_errors', 'bench_stream_messages', 'bench_stream_messages_lost']) {
      t[`${m}{kind:${kind}}`] = ['count>=0'];
    }
    for (const cause of CAUSES) t[`bench_streams_broken{kind:${kind},cause:${cause}}`] = ['count>=0'];
    t[`bench_stream_broken_after{kind:${kind}}`] = ['max>=0'];
  }
  t['bench_streams_broken{cause:backend_stop}'] = ['count>=0'];
  return t;
}

// section(data, cfg, errors): the long_lived section; errors: the summary's load errors by class.
function section(data, cfg, errors) {
  const s = cfg.settings;
  const byKind = {};
  for (const kind of s.BENCH_LONGLIVED_KINDS) {
    const br = {};
    for (const cause of CAUSES) br[cause] = count(data, `bench_streams_broken{kind:${kind},cause:${cause}}`);
    byKind[kind] = {
      opened: count(data, `bench_streams_opened{kind:${kind}}`),
      broken: br,
      open_errors: count(data, `bench_stream_open_errors{kind:${kind}}`),
      messages: count(data, `bench_stream_messages{kind:${kind}}`),
      messages_lost: count(data, `bench_stream_messages_lost{kind:${kind}}`),
      broken_after_ms: countP50Max(data, `bench_stream_broken_after{kind:${kind}}`),
    };
  }
  const sum = (f) => Object.values(byKind).reduce((n, k) => n + f(k), 0);
  const reset = sum((k) => k.broken.reset);
  const lostRequests = Object.values(errors).reduce((n, v) => n + v, 0);
  return {
    kinds: s.BENCH_LONGLIVED_KINDS,
    streams_per_kind: s.BENCH_LONGLIVED_STREAMS,
    interval_ms: s.BENCH_LONGLIVED_INTERVAL,
    disruptions: s.BENCH_LONGLIVED_DISRUPTIONS,
    hold_ms: s.BENCH_LONGLIVED_HOLD,
    by_kind: byKind,
    broken: sum((k) => k.broken.reset + k.broken.backend_stop),
    broken_by_backend: sum((k) => k.broken.backend_stop),
    broken_by_path: reset,
    open_errors: sum((k) => k.open_errors),
    messages: sum((k) => k.messages),
    messages_lost: sum((k) => k.messages_lost),
    requests_lost: lostRequests,
    gate: { max_broken_by_path: 0, max_errors: 0, passed: reset === 0 && lostRequests === 0 },
  };
}

function fmt(v) {
  return v === null || v === undefined ? '-' : String(v);
}

// text(l, table): the section's table and its gate (table: summary-writer.js's).
function text(l, table) {
  return [`Long-lived streams: ${l.streams_per_kind} per kind, one message per ${l.interval_ms} ms, disruptions `
    + `${l.disruptions.join(', ') || 'none'}`,
  table(['Streams', 'opened', 'broken by path', 'ended by backend', 'open errors', 'messages', 'lost', 'broken after p50 ms'],
    Object.keys(l.by_kind).map((kind) => {
      const k = l.by_kind[kind];
      return [kind, k.opened, k.broken.reset, k.broken.backend_stop, k.open_errors, k.messages, k.messages_lost,
        fmt(k.broken_after_ms.p50)];
    })),
  `broken by the path ${l.broken_by_path}   ended by the backend ${l.broken_by_backend}   messages lost ${l.messages_lost}   `
    + `requests lost ${l.requests_lost}   gate: ${l.gate.passed ? 'passed' : 'FAILED'}`].join('\n');
}

function warning(l) {
  if (l.gate.passed) return null;
  return `long-lived FAILED: ${l.broken_by_path} stream(s) broken by the path and ${l.requests_lost} request(s) lost `
    + `through disruptions ${l.disruptions.join(', ') || 'none'}.`;
}

module.exports = {
  KINDS,
  CAUSES,
  thresholds,
  section,
  text,
  warning,
};

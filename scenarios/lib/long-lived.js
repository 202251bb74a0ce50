// long-lived's streams (scenarios/long-lived.js): per kind a scenario of BENCH_LONGLIVED_STREAMS VUs,
// each holding one stream of the stream backend (backends/stream, bench-stream) open through the path
// under test until the load ends, reconnecting at once when it breaks:
//   http       GET <BENCH_STREAM_PATH>/ticks (k6/http, a blocking GET that returns when the stream
//              ends; HTTP/2 through ALPN when the URL is https), one line "<slot> <sent_ms>" a tick
//   websocket  <BENCH_STREAM_PATH>/ws (k6/websockets), one text message a tick
//   grpc       bench.stream.v1.Ticks/Watch (k6/net/grpc, scenarios/lib/ticks.proto), one slot a tick
// A slot is floor(unix_ms / interval): a VU knows every slot it missed, within a stream and across a
// reconnect (messages lost). A stream ends in one of three ways, the cause of a break:
//   done          at the time it asked for (the end of the load): not a break
//   backend_stop  the stream backend ended it early and cleanly on its way down (a scale-down of the
//                 backend disruption): ticks end early, WebSocket closes normally early (the close
//                 code is not read: 1000 and 1001 count alike), gRPC ends with Unavailable and the
//                 backend's message "server stopping"
//   reset         anything else: the connection or the stream broke (a truncated body, an abnormal
//                 WebSocket close, a gRPC error the backend did not send), the fault of the path
// A stream that cannot be opened (no 200, no handshake, no first message) is an open error; the VU
// tries again after one interval.
'use strict';
const http = require('k6/http');
const exec = require('k6/execution');
const { sleep } = require('k6');
const { matchServerName, streamServerName } = require('./request.js');
const { runConfigAgain } = require('./run-config.js');

const { KINDS, CAUSES } = require('./long-lived-summary.js');
const SERVER_STOPPING = 'server stopping'; // backends/stream's message when it ends a stream on SIGTERM
// k6 hands the gRPC status over as its name (k6 v0.51) or its number: both are taken
const GRPC_UNAVAILABLE = ['Unavailable', '14'];
const GRPC_METHOD = 'bench.stream.v1.Ticks/Watch';
// A stream that ends cleanly this close to the time it asked for has ended on time (the backend
// counts the duration from its own start of the stream, a little after the client's).
const ON_TIME_MS = 1000;
const MIN_STREAM_MS = 200; // less time left than this: no new stream

const {
  streamsOpened: opened, streamsBroken: broken, streamOpenErrors: openErrors, streamMessages: received,
  streamMessagesLost: lost, streamBrokenAfter: brokenAfter,
} = require('./stream-metrics.js');

// This VU's books: the last slot it received (any stream of its kind), and the break whose gap the
// next stream's first message closes.
const books = { lastSlot: null, pending: null };

// seen(kind, slot): one message; a gap since the last slot is messages lost.
function seen(kind, slot, tags) {
  if (!Number.isFinite(slot)) return;
  received.add(1, tags);
  if (books.lastSlot !== null && slot > books.lastSlot + 1) lost.add(slot - books.lastSlot - 1, tags);
  if (books.pending) {
    const p = books.pending;
    books.pending = null;
    console.log(`stream ${kind}: broken (${p.cause}) after ${p.ageMs} ms: ${p.error}; `
      + `${books.lastSlot === null ? 0 : Math.max(0, slot - books.lastSlot - 1)} message(s) missed until the next stream`);
  }
  if (books.lastSlot === null || slot > books.lastSlot) books.lastSlot = slot;
}

// ended(kind, o): books one stream's end {openedAt, askedEnd, clean, error, backendStop}.
function ended(kind, o) {
  const tags = { kind };
  const now = Date.now();
  if (o.clean && now >= o.askedEnd - ON_TIME_MS) return; // done
  const cause = o.backendStop || (o.clean && !o.error) ? 'backend_stop' : 'reset';
  broken.add(1, { kind, cause });
  brokenAfter.add(now - o.openedAt, tags);
  books.pending = { cause, ageMs: Math.round(now - o.openedAt), error: o.error || 'ended early, cleanly' };
}

function streamConfig() {
  const cfg = runConfigAgain();
  const s = cfg.settings;
  return { cfg, intervalMs: s.BENCH_LONGLIVED_INTERVAL, path: s.BENCH_STREAM_PATH, host: cfg.targetHost };
}

// timeLeft(endAt): ms until the load ends, or 0 (then the VU waits for the scenario's end).
function timeLeft(endAt) {
  const left = endAt - Date.now();
  if (left >= MIN_STREAM_MS) return Math.round(left);
  sleep(Math.max(0, left) / 1000 + 0.1);
  return 0;
}

function query(intervalMs, durationMs) {
  return `interval=${intervalMs}&duration=${durationMs}`;
}

// httpStream(endAt): one ticks stream; returns when it ends.
function httpStream(endAt) {
  const { cfg, intervalMs, path, host } = streamConfig();
  const left = timeLeft(endAt);
  if (!left) return;
  matchServerName();
  const t0 = Date.now();
  const params = { responseType: 'text', timeout: `${left + 30000}ms`, tags: { kind: 'http' }, headers: {} };
  if (host) params.headers.Host = host;
  const res = http.get(`${cfg.targetUrl}${path}/ticks?${query(intervalMs, left)}`, params);
  const lines = String(res.body || '').split('\n');
  lines.pop(); // what follows the last newline: nothing, or a line cut short
  // k6 gives a body cut short with status 0 and the error, and keeps what arrived: lines mean it was open
  if (lines.length === 0 && (res.status !== 200 || res.error)) {
    openErrors.add(1, { kind: 'http' });
    console.warn(`stream http: could not open: status ${res.status} ${res.error || ''}`);
    sleep(intervalMs / 1000);
    return;
  }
  const tm = res.timings;
  opened.add(1, { kind: 'http' });
  for (const line of lines) seen('http', Number(line.split(' ')[0]), { kind: 'http' });
  ended('http', { openedAt: t0 + tm.blocked + tm.connecting + tm.tls_handshaking + tm.sending + tm.waiting,
    askedEnd: t0 + left, clean: !res.error, error: res.error ? `${res.error} (k6 error code ${res.error_code})` : '' });
}

// wsUrl(cfg): the target URL with the WebSocket scheme.
function wsUrl(cfg) {
  return cfg.targetUrl.replace(/^http/, 'ws');
}

// websocketStream(ws, endAt): one WebSocket stream; the iteration ends when the socket closes.
function websocketStream(ws, endAt) {
  const { cfg, intervalMs, path, host } = streamConfig();
  const left = timeLeft(endAt);
  if (!left) return;
  const t0 = Date.now();
  streamServerName(host);
  const params = { tags: { kind: 'websocket' }, headers: host ? { Host: host } : {} };
  const socket = new ws.WebSocket(`${wsUrl(cfg)}${path}/ws?${query(intervalMs, left)}`, null, params);
  const st = { openedAt: null, error: '' };
  socket.onopen = () => {
    st.openedAt = Date.now();
    opened.add(1, { kind: 'websocket' });
  };
  socket.onmessage = (e) => seen('websocket', Number(String(e.data).split(' ')[0]), { kind: 'websocket' });
  socket.onerror = (e) => {
    st.error = String((e && e.error) || 'error');
  };
  socket.onclose = () => {
    if (st.openedAt === null) {
      openErrors.add(1, { kind: 'websocket' });
      console.warn(`stream websocket: could not open: ${st.error}`);
      sleep(intervalMs / 1000);
      return;
    }
    ended('websocket', { openedAt: st.openedAt, askedEnd: t0 + left, clean: !st.error, error: st.error });
  };
}

// grpcAddress(cfg): host:port of the target URL, which k6's gRPC client sends as :authority (the
// chart's gRPC routes accept it; k6 v1 could send BENCH_TARGET_HOST through connect's `authority`).
function grpcAddress(cfg) {
  const m = /^(https?):\/\/([^/]+)/.exec(cfg.targetUrl);
  return /:\d+$/.test(m[2]) ? m[2] : `${m[2]}:${m[1] === 'https' ? 443 : 80}`;
}

// grpcStream(grpc, client, endAt): one Ticks/Watch stream; the iteration ends when it ends.
function grpcStream(grpc, client, endAt) {
  const { cfg, intervalMs, host } = streamConfig();
  const left = timeLeft(endAt);
  if (!left) return;
  const t0 = Date.now();
  streamServerName(host);
  try {
    client.connect(grpcAddress(cfg), { plaintext: !/^https:/.test(cfg.targetUrl), timeout: '10s' });
  } catch (err) {
    openErrors.add(1, { kind: 'grpc' });
    console.warn(`stream grpc: could not connect: ${err}`);
    sleep(intervalMs / 1000);
    return;
  }
  const st = { openedAt: null, error: null };
  const stream = new grpc.Stream(client, GRPC_METHOD, { tags: { kind: 'grpc' } });
  stream.on('data', (m) => {
    if (st.openedAt === null) {
      st.openedAt = Date.now();
      opened.add(1, { kind: 'grpc' });
    }
    // protojson writes an Int64Value as its value alone, a string
    seen('grpc', Number(m !== null && typeof m === 'object' ? m.value : m), { kind: 'grpc' });
  });
  stream.on('error', (e) => {
    st.error = e;
  });
  stream.on('end', () => {
    client.close();
    const e = st.error;
    const text = e ? `gRPC status ${e.code}: ${e.message}` : '';
    if (st.openedAt === null) {
      openErrors.add(1, { kind: 'grpc' });
      console.warn(`stream grpc: could not open: ${text || 'ended before its first message'}`);
      sleep(intervalMs / 1000);
      return;
    }
    ended('grpc', { openedAt: st.openedAt, askedEnd: t0 + left, clean: !e, error: text,
      backendStop: Boolean(e && GRPC_UNAVAILABLE.includes(String(e.code)) && String(e.message).includes(SERVER_STOPPING)) });
  });
  stream.write({ interval_ms: intervalMs, duration_ms: left });
  stream.end();
}

// streamScenarios(cfg): one scenario per kind, BENCH_LONGLIVED_STREAMS VUs each, over the measured
// load (after the warm-up); each VU's streams ask to last until its end.
function streamScenarios(cfg) {
  const out = {};
  for (const kind of cfg.settings.BENCH_LONGLIVED_KINDS) {
    out[`stream_${kind}`] = {
      executor: 'constant-vus',
      exec: `stream_${kind}`,
      vus: cfg.settings.BENCH_LONGLIVED_STREAMS,
      duration: `${cfg.durationMs}ms`,
      startTime: `${cfg.warmupMs}ms`,
      // the last streams end with the load: room for them to say so
      gracefulStop: '30s',
      tags: { role: 'stream', kind },
    };
  }
  return out;
}

// streamVus(ws, grpc, holder): the functions the stream scenarios run (ws, grpc: k6's modules, which
// only an entry script can import; holder.client: the gRPC client with ticks.proto loaded, made by
// the entry script in the init context once the configuration says gRPC streams run). The load ends
// BENCH_DURATION after the stream scenario's start.
function streamVus(ws, grpc, holder) {
  const endAt = () => exec.scenario.startTime + runConfigAgain().durationMs;
  return {
    stream_http() {
      httpStream(endAt());
    },
    stream_websocket() {
      websocketStream(ws, endAt());
    },
    stream_grpc() {
      grpcStream(grpc, holder.client, endAt());
    },
  };
}

module.exports = {
  KINDS,
  CAUSES,
  SERVER_STOPPING,
  streamScenarios,
  streamVus,
};

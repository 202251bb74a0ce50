// long-lived's stream metrics (long-lived.js; scenarios/contract.json lists them), in a module of
// their own like churn-metrics.js: only the runs that hold streams load it. Tag kind = http |
// websocket | grpc; bench_streams_broken also cause = backend_stop | reset (long-lived.js says what
// each means).
'use strict';
const { Counter, Trend } = require('k6/metrics');

// Streams opened (a 200 with its first message, a WebSocket handshake, a gRPC stream's first message).
const streamsOpened = new Counter('bench_streams_opened');
// Streams that ended before the time they asked for, by cause.
const streamsBroken = new Counter('bench_streams_broken');
// Attempts to open a stream that failed (no 200, no handshake, no first message).
const streamOpenErrors = new Counter('bench_stream_open_errors');
// Messages received, and slots missed (a gap in the slots, within a stream or across a reconnect).
const streamMessages = new Counter('bench_stream_messages');
const streamMessagesLost = new Counter('bench_stream_messages_lost');
// Per broken stream, ms from its opening to the break.
const streamBrokenAfter = new Trend('bench_stream_broken_after', true);

module.exports = {
  streamsOpened,
  streamsBroken,
  streamOpenErrors,
  streamMessages,
  streamMessagesLost,
  streamBrokenAfter,
};

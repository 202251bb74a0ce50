// long-lived: HTTP streams, WebSocket connections and gRPC server streams held open through the path
// under test while the controller reloads, the stream backend scales and the controller restarts,
// beside the usual constant short-request load (bench issue #29, item 5).
// Reproduces: the long-lived connection part of zero-downtime reconfiguration (NGINX Gateway
//   Fabric's suite and the anchors: a reload must not cut what the proxy carries); NGINX-based
//   controllers reload their whole configuration on a route change, and old workers close their
//   connections after a while: every stream through them breaks.
// Load: as static.js (BENCH_RATE req/s open model, BENCH_CONNECTIONS VUs, keep-alive), and per kind
//   of BENCH_LONGLIVED_KINDS (http, websocket, grpc) BENCH_LONGLIVED_STREAMS VUs each holding one
//   stream of the stream backend (backends/stream) under BENCH_STREAM_PATH, one message per
//   BENCH_LONGLIVED_INTERVAL, reconnecting at once when it breaks (lib/long-lived.js).
// Churn: after BENCH_LONGLIVED_HOLD, each of BENCH_LONGLIVED_DISRUPTIONS in turn, BENCH_LONGLIVED_HOLD
//   after each: reload = one extra route on the test's host (BENCH_ROUTE_KIND's kind, to the first
//   Service of BENCH_ROUTE_BACKENDS) created, held, deleted; backend = the stream backend's Deployment
//   (BENCH_STREAM_DEPLOYMENT) scaled to BENCH_STREAM_REPLICAS + 2, held, and back (the ReplicaSet
//   removes the two newest pods: only streams that reconnected onto them end, cause backend_stop;
//   the streams on the pods that stay must survive the endpoint changes, which some controllers
//   apply by a reload); controller = every Ready controller pod deleted in
//   turn as in controller-restart.js (its BENCH_CONTROLLER_* settings; lib/stream-disruptions.js
//   longLivedChurn). Each change is an event
//   (bench_scale_events{action}: reload_route_created, reload_route_deleted, stream_scale,
//   controller_podkill) the report attributes errors and breaks to.
// Thresholds (the gate, lib/long-lived-summary.js says why): no dropped iterations, no failed load
//   request, no stream broken by the path (cause reset). Summary: long_lived.
import grpc from 'k6/net/grpc';
import ws from 'k6/websockets';
import { experiment } from './lib/churn-experiment.js';
import { streamScenarios, streamVus } from './lib/long-lived.js';
import { longLivedChurn } from './lib/stream-disruptions.js';
import { KINDS, thresholds } from './lib/long-lived-summary.js';
import { runConfigAgain } from './lib/run-config.js';

const holder = { client: null };

const built = experiment({
  name: 'long-lived',
  settings: {
    BENCH_LONGLIVED_KINDS: { type: 'words', default: 'http,websocket,grpc', values: KINDS, unique: true },
    BENCH_LONGLIVED_STREAMS: { type: 'count', default: '5', max: 1000 }, // streams held per kind, one VU each
    BENCH_LONGLIVED_INTERVAL: { type: 'duration', default: '100ms' }, // one message per stream per interval
    BENCH_LONGLIVED_DISRUPTIONS: { type: 'words', default: 'reload,backend,controller', values: ['reload', 'backend', 'controller'],
      none: 'none' }, // in order
    BENCH_LONGLIVED_HOLD: { type: 'duration', default: '8s' }, // before the first disruption and after each
    BENCH_STREAM_PATH: { type: 'path', default: '/stream' }, // the prefix the stream backend's routes serve
    BENCH_STREAM_DEPLOYMENT: { type: 'dnsName', default: 'bench-stream' }, // the stream backend's Deployment
    BENCH_STREAM_REPLICAS: { type: 'count', default: '3', max: 998 }, // its replicas as installed
    BENCH_CONTROLLER_NAMESPACE: { type: 'text', default: '' }, // as controller-restart.js
    BENCH_CONTROLLER_SELECTOR: { type: 'labelSelector', default: 'app.kubernetes.io/name=traefik' },
    BENCH_CONTROLLER_HOLD: { type: 'duration', default: '10s' },
    BENCH_CONTROLLER_READY_TIMEOUT: { type: 'duration', default: '60s' },
  },
  thresholds: (cfg) => thresholds(cfg),
  summary: () => ({ longLived: true }),
  scenarios: (cfg) => streamScenarios(cfg),
  vus: streamVus(ws, grpc, holder),
  churn: longLivedChurn,
});

const settings = runConfigAgain().settings;
// the stream backend's range (backends/stream): refused here, before any load, rather than by each stream
if (settings.BENCH_LONGLIVED_INTERVAL < 10 || settings.BENCH_LONGLIVED_INTERVAL > 60000) {
  throw new Error(`invalid BENCH_LONGLIVED_INTERVAL=${JSON.stringify(runConfigAgain().settingTexts.BENCH_LONGLIVED_INTERVAL)}: `
    + 'expected a duration from 10ms to 60s (the stream backend\'s range)');
}
if (settings.BENCH_LONGLIVED_KINDS.includes('grpc')) {
  holder.client = new grpc.Client();
  holder.client.load(['lib'], 'ticks.proto');
}

export const { options, setup, load, churn, teardown, handleSummary, stream_http, stream_websocket, stream_grpc } = built;

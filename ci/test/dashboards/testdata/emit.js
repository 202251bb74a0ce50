// Test data for the dashboards check: real k6 requests against a local nginx plus every bench
// custom metric, so a real Prometheus receives the exact series names and labels the dashboards
// query (remote write, native histograms). The churn telemetry here is SIMULATED (the fast tier has
// no cluster): desired/ready replicas follow 5 -> 7 -> 5, with a scale event, a convergence time and
// a probe request per step, one route of each kind created, served and changed per step, every
// third step controller-restart's recovery times of a deleted controller pod, dataplane-scale's
// data plane 1 -> 2 -> 1 -> 2 and backend-failover's flaps in its first steps, and controller-upgrade's
// rollout of two pods, long-lived's streams broken and reopened. The
// real churn series come from scenarios/ in the e2e run, the real route series from ci/test/scenarios/routes/.
//
// A warm-up (scenarios/lib/load.js measuredLoad: scenario and role warmup) sends clean requests for
// the first WARMUP_S seconds, beside the load here: the dashboards must leave them out of every
// figure and mark their window.
//
// Env: BENCH_TARGET_URL (nginx), BENCH_CLOSED_URL (a port nothing listens on), BENCH_STALL_URL (a
// listener that never answers), BENCH_RATE, BENCH_DURATION.
import http from 'k6/http';
import exec from 'k6/execution';
import { sleep } from 'k6';
import bench from 'k6/x/bench';
// The scenarios' own classification (class and cause tags) and metric objects, not copies of them;
// the route experiments' metrics are simulated like the churn below.
import { countError } from '../../../../scenarios/lib/errors.js';
import { runnerGcCpu, runnerLag, runnerSchedP99, runnerThrottled } from '../../../../scenarios/lib/metrics.js';
import {
  controllerRecovery, convergence, dataplaneProbeFailures, dataplaneReady, dataplaneReplicas, dataplaneStep,
  failoverBudget, failoverFlap, replicasDesired, replicasReady, scaleEvents, upgradePod, upgradeRollout,
} from '../../../../scenarios/lib/churn-metrics.js';
import {
  routeChanges, routeErrors, routePreReady, routePropagation, routesCreated, routesServing,
} from '../../../../scenarios/lib/route-metrics.js';
import {
  streamBrokenAfter, streamMessages, streamMessagesLost, streamOpenErrors, streamsBroken, streamsOpened,
} from '../../../../scenarios/lib/stream-metrics.js';
import { recordRunInfo } from '../../../../scenarios/lib/run-info.js';
import { parseDuration } from '../../../../scenarios/lib/duration.js';

const target = __ENV.BENCH_TARGET_URL || 'http://127.0.0.1:8080';
const closed = __ENV.BENCH_CLOSED_URL || 'http://127.0.0.1:9';
const stall = __ENV.BENCH_STALL_URL || '';
const rate = parseInt(__ENV.BENCH_RATE || '50', 10);
const duration = __ENV.BENCH_DURATION || '30s';
const WARMUP_S = 5;


export const options = {
  scenarios: {
    load: {
      executor: 'constant-arrival-rate', exec: 'load', rate, timeUnit: '1s', duration,
      preAllocatedVUs: 10, maxVUs: 10, tags: { role: 'load' },
    },
    churn: { executor: 'constant-vus', exec: 'churn', vus: 1, duration, tags: { role: 'churn' } },
    warmup: {
      executor: 'constant-arrival-rate', exec: 'warmup', rate: 10, timeUnit: '1s', duration: `${WARMUP_S}s`,
      preAllocatedVUs: 5, maxVUs: 5, gracefulStop: '0s', tags: { role: 'warmup' },
    },
    // One VU for 5 requests/s to a server that never answers: timeouts, and dropped iterations.
    overload: {
      executor: 'constant-arrival-rate', exec: 'overload', rate: 5, timeUnit: '1s', duration,
      preAllocatedVUs: 1, maxVUs: 1, tags: { role: 'load' },
    },
  },
  // The load-only request count in the summary export, to compare with the dashboards' totals.
  thresholds: { 'http_reqs{role:load}': ['count>=0'], 'http_reqs{role:warmup}': ['count>=0'] },
};

// Mostly 200s; every 50th request a 404 (http_4xx), every 50th+13 a refused connection.
// The run's settings as every scenario's setup() writes them (scenarios/lib/run-info.js).
export function setup() {
  recordRunInfo({ rate, durationMs: parseDuration('BENCH_DURATION', duration), warmupMs: WARMUP_S * 1000, connections: 10,
    timeoutMs: 2000, keepalive: true, path: '/' }, target);
}

export function load() {
  const i = exec.scenario.iterationInTest;
  let url = `${target}/`;
  let path = '/';
  if (i % 50 === 7) { url = `${target}/missing`; path = '/missing'; }
  if (i % 50 === 13) { url = `${closed}/`; path = 'closed'; }
  classify(http.get(url, { timeout: '2s', tags: { path } }));
}

export function warmup() {
  http.get(`${target}/`, { timeout: '2s', tags: { path: '/' } });
}

export function overload() {
  if (stall) classify(http.get(`${stall}/`, { timeout: '1s', tags: { path: 'stall' } }));
}

function classify(res) {
  countError(res);
}

// Simulated churn: one step every 4 s, ready follows desired after a short lag. The runner lag
// (scenarios/lib/lag.js) is measured for real: how late this VU's sleep returned.
export function churn() {
  const step = exec.scenario.iterationInTest;
  const t0 = Date.now();
  sleep(0.1);
  runnerLag.add(Math.max(0, Date.now() - t0 - 100));
  // The runner's own runtime and cgroup figures, as scenarios/lib/lag.js sends them (real, not simulated).
  const rt = bench.runtimeStats();
  runnerSchedP99.add(rt.sched_latency_ms.p99);
  runnerGcCpu.add(rt.gc_cpu_fraction);
  const th = bench.cpuThrottling();
  if (th.cgroup) runnerThrottled.add(th.throttled_ratio);
  const want = step % 2 === 0 ? 7 : 5;
  const before = want === 7 ? 5 : 7;
  replicasDesired.add(want);
  replicasReady.add(before);
  scaleEvents.add(1, { action: 'scale' });
  const lag = 0.5 + (step % 3) * 0.25;
  // Like the real churn VU's convergence probes (role=churn): requests the dashboards must not
  // count as load.
  http.get(`${target}/healthz`, { timeout: '2s', tags: { path: '/healthz' } });
  sleep(lag);
  replicasReady.add(want);
  convergence.add(lag * 1000, { event: want > before ? 'added' : 'removed' });
  // Simulated route experiment per step: one route of each kind created, probed 404 a few times,
  // served after `lag`; one change and, every third step, a non-2xx answer.
  for (const kind of ['httproute', 'ingress']) {
    routesCreated.add(1, { kind });
    routePreReady.add(3 + step % 4, { kind, status: '404' });
    routePropagation.add(lag * 1000 + (kind === 'ingress' ? 200 : 0), { kind });
    routesServing.add(step + 1, { kind });
    routeChanges.add(1, { kind });
    if (step % 3 === 0) routeErrors.add(1, { kind });
  }
  // controller-restart's recovery times (its deletion events stay out: the report part counts one
  // convergence sample per scale event here)
  if (step % 3 === 1) {
    controllerRecovery.add(lag * 2000, { measure: 'replaced' });
    controllerRecovery.add(lag * 1000, { measure: 'recovered' });
  }
  // dataplane-scale's steps, at most 3 (no scale event either, for the same reason)
  if (step < 3) {
    const tags = { step: String(step + 1) };
    const replicas = step % 2 === 0 ? 2 : 1;
    if (step === 0) dataplaneReplicas.add(1, { state: 'start' });
    dataplaneReplicas.add(replicas, { state: 'desired' });
    dataplaneStep.add(replicas, tags);
    dataplaneReady.add(lag * 1500, tags);
    dataplaneReplicas.add(replicas, { state: 'ready' });
    dataplaneProbeFailures.add(step % 2, tags);
    // backend-failover's flaps (their flip events stay out, as above) and its budget
    failoverFlap.add(1000 + lag * 1000, { measure: 'unhealthy' });
    failoverFlap.add(lag * 800, { measure: 'not_ready' });
    failoverBudget.add(15, { mode: 'errors' });
  }
  // long-lived's streams: one of each kind held, a reset and a reconnect in the first steps, a
  // backend_stop in the third (no scale event either)
  for (const kind of ['http', 'websocket', 'grpc']) {
    if (step === 0) streamsOpened.add(1, { kind });
    streamMessages.add(10, { kind });
    if (step < 3) {
      const cause = step === 2 ? 'backend_stop' : 'reset';
      streamsBroken.add(1, { kind, cause });
      streamBrokenAfter.add(lag * 1000 + 3000, { kind });
      streamMessagesLost.add(step + 1, { kind });
      streamOpenErrors.add(step % 2, { kind });
      streamsOpened.add(1, { kind });
    }
  }
  // controller-upgrade's rollout of two pods, each pod's new Ready then old terminating, then complete
  // (no scale event either)
  if (step < 2) {
    const pod = String(step + 1);
    upgradePod.add(lag * 1000 + 1000 * step, { event: 'ready', pod });
    upgradePod.add(lag * 1000 + 1000 * step + 300, { event: 'terminating', pod });
    if (step === 1) upgradeRollout.add(lag * 1000 + 1500);
  }
  sleep(3.9 - lag);
}

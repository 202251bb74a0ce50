// The summary writer, loaded in VU 0 only (summary.js): the published-style table (summary.txt, stdout) and the same numbers as JSON
// (summary.json, and on stdout between BENCH_SUMMARY_JSON_BEGIN / _END lines for log scrapers).
// Schema bench.summary/v1: scenarios/interfaces.md. Only requests of load scenarios (tag role=load)
// count; the churn VU's probes (role=churn), the warm-up's requests (role=warmup, load.js
// measuredLoad: only their number is reported, requests.warmup_requests) and setup checks do not.
//
// A report describes the run: {scenario, cfg, targetUrl, path, keepalive, rateTarget, durationMs,
// churnPattern (string or null), parts: [{name, scenario, rateTarget, durationMs}] for by_path,
// steps: parts that get sub-metrics but no by_path entry (max-rps), controllerRestart: {namespace,
// selector} when the run deletes the controller's pods (controller-restart), dataplaneScale:
// {namespace, deployment, scaled, levels, mode} when it scales the data plane (dataplane-scale), controllerUpgrade:
// {kind, namespace, name, container, imageTo} when it rolls the controller (controller-upgrade),
// backendFailover: {mode, unhealthyMs, healthyMs, maxErrors} when a backend pod flaps
// (backend-failover), extend(data, summary):
// optional hook for experiment-specific keys}.
'use strict';
const exec = require('k6/execution');
const bench = require('k6/x/bench');
const { ERROR_CAUSES, ERROR_CLASSES } = require('./errors.js');
const { MAX_STEPS } = require('./dataplane.js');
const { ROLLED_AT } = require('./rollout.js');
const { ACTIONS: FAILOVER_ACTIONS, UNHEALTHY_ROW } = require('./failover.js');
const {
  LAG_LIMIT_MS, LAG_LIMIT_P99_MS, lagCpuBound, runtimeVerdict, SCHED_LIMIT_P99_MS, GC_CPU_LIMIT, THROTTLED_LIMIT,
  throttleVerdict,
} = require('./lag.js');
require('./metrics.js');
const { runnerShare } = require('./segment.js');
const { WARMUP } = require('./load.js');
require('./churn-metrics.js');
const { RATE_HELD_SHARE, rateHeld } = require('./verdicts.js');
// long-lived: its summary section, text table and zero-error gate
const longLived = require('./long-lived-summary.js');
const { sendRunEnd } = require('./run-end.js');

const SCHEMA = 'bench.summary/v1';
const LOAD = 'role:load';
const WARMUP_REQUESTS = `http_reqs{role:${WARMUP.role}}`;
const WARMUP_DROPPED = `dropped_iterations{scenario:${WARMUP.scenario}}`;
const PERCENTILES = [['p50', 'p(50)'], ['p90', 'p(90)'], ['p99', 'p(99)'], ['p99.9', 'p(99.9)'],
  ['p99.99', 'p(99.99)'], ['p99.999', 'p(99.999)'], ['p99.9999', 'p(99.9999)']];

function addThreshold(thresholds, key, expr) {
  thresholds[key] = (thresholds[key] || []).concat([expr]);
}

// summaryThresholds(report, thresholds): adds the sub-metrics the summary reads (always-true
// expressions: k6 computes a sub-metric only when a threshold names it). Returns thresholds.
function summaryThresholds(report, thresholds) {
  const t = thresholds || {};
  const parts = (report.parts || []).concat(report.steps || []);
  const filters = [LOAD].concat(parts.map((p) => `scenario:${p.scenario}`));
  for (const f of filters) {
    addThreshold(t, `http_reqs{${f}}`, 'count>=0');
    addThreshold(t, `http_req_duration{${f}}`, 'max>=0');
    if (f !== LOAD) addThreshold(t, `dropped_iterations{${f}}`, 'count>=0');
    addThreshold(t, `data_received{${f}}`, 'count>=0');
    for (const cls of ERROR_CLASSES) addThreshold(t, `bench_errors{${f},class:${cls}}`, 'count>=0');
  }
  for (const cls of ERROR_CLASSES) {
    for (const cause of ERROR_CAUSES[cls]) addThreshold(t, `bench_errors{${LOAD},class:${cls},cause:${cause}}`, 'count>=0');
  }
  addThreshold(t, 'bench_endpoint_convergence{event:added}', 'max>=0');
  addThreshold(t, 'bench_endpoint_convergence{event:removed}', 'max>=0');
  addThreshold(t, 'bench_scale_events', 'count>=0');
  if (report.cfg.warmupMs > 0) {
    addThreshold(t, WARMUP_REQUESTS, 'count>=0');
    addThreshold(t, WARMUP_DROPPED, 'count>=0');
  }
  if (report.controllerRestart) {
    addThreshold(t, 'bench_scale_events{action:controller_podkill}', 'count>=0');
    for (const m of RECOVERY_MEASURES) addThreshold(t, `bench_controller_recovery{measure:${m}}`, 'max>=0');
  }
  if (report.dataplaneScale) {
    addThreshold(t, 'bench_scale_events{action:dataplane_scale}', 'count>=0');
    addThreshold(t, 'bench_dataplane_replicas{state:start}', 'value>=0');
    addThreshold(t, 'bench_dataplane_ready', 'max>=0');
    // a sub-metric per step: steps are numbered in the order made, up to MAX_STEPS
    for (let i = 1; i <= MAX_STEPS; i++) {
      addThreshold(t, `bench_dataplane_step{step:${i}}`, 'value>=0');
      addThreshold(t, `bench_dataplane_ready{step:${i}}`, 'max>=0');
      addThreshold(t, `bench_dataplane_probe_failures{step:${i}}`, 'count>=0');
    }
  }
  if (report.controllerUpgrade) {
    for (const action of UPGRADE_ACTIONS) addThreshold(t, `bench_scale_events{action:${action}}`, 'count>=0');
    addThreshold(t, 'bench_upgrade_rollout', 'max>=0');
    for (let i = 1; i <= MAX_STEPS; i++) {
      for (const event of ['terminating', 'ready']) addThreshold(t, `bench_upgrade_pod{event:${event},pod:${i}}`, 'max>=0');
    }
  }
  if (report.backendFailover) {
    for (const a of FAILOVER_ACTIONS) addThreshold(t, `bench_scale_events{action:${a}}`, 'count>=0');
    for (const m of FAILOVER_MEASURES) addThreshold(t, `bench_failover_flap{measure:${m}}`, 'max>=0');
  }
  return t;
}

const UPGRADE_ACTIONS = ['controller_rollout', 'controller_pod_terminating', 'controller_pod_ready'];
const RECOVERY_MEASURES = ['replaced', 'recovered'];
const FAILOVER_MEASURES = ['unhealthy', 'not_ready'];

function round(v, digits) {
  if (v === null || v === undefined || Number.isNaN(v)) return null;
  const f = Math.pow(10, digits === undefined ? 3 : digits);
  return Math.round(v * f) / f;
}

function count(data, key) {
  const m = data.metrics[key];
  return m ? m.values.count : 0;
}

function latencyFrom(values) {
  const out = { min: null, avg: null, max: null };
  for (const [name] of PERCENTILES) out[name] = null;
  if (!values || !values.count) return out;
  out.min = round(values.min);
  out.avg = round(values.avg);
  out.max = round(values.max);
  for (const [name, stat] of PERCENTILES) out[name] = round(values[stat]);
  return out;
}

function errorsFor(data, filter) {
  const out = {};
  for (const cls of ERROR_CLASSES) out[cls] = count(data, `bench_errors{${filter},class:${cls}}`);
  return out;
}

// errorCausesFor(data, filter): {class: {cause: count}} (errors.js ERROR_CAUSES).
function errorCausesFor(data, filter) {
  const out = {};
  for (const cls of ERROR_CLASSES) {
    out[cls] = {};
    for (const cause of ERROR_CAUSES[cls]) out[cls][cause] = count(data, `bench_errors{${filter},class:${cls},cause:${cause}}`);
  }
  return out;
}

// droppedFor: k6 tags dropped_iterations with the run tags and `scenario` only, never with a
// scenario's own tags (role), so role:load never matches it. Only the arrival-rate executors drop
// iterations and every one of them but the warm-up is a load scenario: for role:load the count is
// the plain metric's less the warm-up's.
function droppedFor(data, filter) {
  if (filter !== LOAD) return count(data, `dropped_iterations{${filter}}`);
  return count(data, 'dropped_iterations') - count(data, WARMUP_DROPPED);
}

// requestsFor(data, filter, rateTarget, durationMs): rate_target is this runner's share of
// rateTarget (runnerShare): with several runners each holds its own part of the run's rate.
function requestsFor(data, filter, rateTarget, durationMs) {
  const total = count(data, `http_reqs{${filter}}`);
  return {
    total,
    rate_target: round(rateTarget * runnerShare(), 1),
    rate_achieved: round(total / (durationMs / 1000), 1),
    dropped_iterations: droppedFor(data, filter),
  };
}

function countP50Max(data, key) {
  const m = data.metrics[key];
  const v = m ? m.values : null;
  if (!v || !v.count) return { count: 0, p50: null, max: null };
  return { count: v.count, p50: round(v['p(50)'], 1), max: round(v.max, 1) };
}

function convergenceFor(data, event) {
  return countP50Max(data, `bench_endpoint_convergence{event:${event}}`);
}

// controllerRestartFor(data, c, errors): controller-restart's section. Times from each delete call
// (recovery.js); requests_lost: the load's failed requests, every class (the zero-error gate's count;
// the report attributes them to the deletions from Prometheus).
function controllerRestartFor(data, c, errors) {
  const deleted = count(data, 'bench_scale_events{action:controller_podkill}');
  const replaced = countP50Max(data, 'bench_controller_recovery{measure:replaced}');
  const recovered = countP50Max(data, 'bench_controller_recovery{measure:recovered}');
  const lost = ERROR_CLASSES.reduce((n, cls) => n + errors[cls], 0);
  return {
    namespace: c.namespace,
    selector: c.selector,
    pods_deleted: deleted,
    unrecovered: Math.max(0, deleted - recovered.count),
    replaced_ms: replaced,
    recovered_ms: recovered,
    requests_lost: lost,
    gate: { max_errors: 0, passed: lost === 0 },
  };
}

// dataplaneScaleFor(data, d, errors): dataplane-scale's section. Per step (bench_dataplane_*{step},
// numbered in the order made): the replicas it went from and to, ms from its scale call to Ready (null:
// not Ready in time), the churn's failed probes during it; levels_reached: the levels of d.levels the
// data plane was Ready at, in turn; requests_lost: the load's failed requests, every class (the
// zero-error gate's count; the report attributes them to the steps from Prometheus).
function dataplaneScaleFor(data, d, errors) {
  const gauge = (key) => (data.metrics[key] ? data.metrics[key].values.value : null);
  const start = gauge('bench_dataplane_replicas{state:start}');
  const steps = [];
  let from = start;
  for (let i = 1; i <= MAX_STEPS; i++) {
    const to = gauge(`bench_dataplane_step{step:${i}}`);
    if (!to) break; // a step sets at least 1 replica: none = not made
    const ready = countP50Max(data, `bench_dataplane_ready{step:${i}}`);
    steps.push({ step: i, from, to, ready_ms: ready.count ? ready.max : null,
      probe_failures: count(data, `bench_dataplane_probe_failures{step:${i}}`) });
    from = to;
  }
  const reached = [];
  for (const at of [start].concat(steps.filter((st) => st.ready_ms !== null).map((st) => st.to))) {
    if (reached.length < d.levels.length && at === d.levels[reached.length]) reached.push(at);
  }
  const lost = ERROR_CLASSES.reduce((n, cls) => n + errors[cls], 0);
  return {
    namespace: d.namespace,
    deployment: d.deployment,
    scaled: d.scaled || null,
    mode: d.mode,
    levels: d.levels,
    start_replicas: start,
    levels_reached: reached,
    steps,
    unready: steps.filter((st) => st.ready_ms === null).length,
    ready_ms: countP50Max(data, 'bench_dataplane_ready'),
    requests_lost: lost,
    gate: { max_errors: 0, passed: lost === 0 },
  };
}

// controllerUpgradeFor(data, u, errors): controller-upgrade's section. The image it came from is
// setup's reading (data.setup_data); per pod, in the order seen, ms from the rollout's update call
// until the n-th old pod was seen terminating and the n-th new pod Ready (a step pairs the two;
// null where there was no such pod); rollout_ms: until complete (null: not complete in time);
// requests_lost: the load's failed requests, every class (the zero-error gate's count; the report
// attributes them to the rollout's events from Prometheus).
function controllerUpgradeFor(data, u, errors) {
  const at = (key) => (data.metrics[key] && data.metrics[key].values.count ? round(data.metrics[key].values.max, 1) : null);
  const steps = [];
  for (let i = 1; i <= MAX_STEPS; i++) {
    const old = at(`bench_upgrade_pod{event:terminating,pod:${i}}`);
    const ready = at(`bench_upgrade_pod{event:ready,pod:${i}}`);
    if (old === null && ready === null) break;
    steps.push({ step: i, old_terminating_ms: old, new_ready_ms: ready });
  }
  const setup = (data.setup_data && data.setup_data.controllerUpgrade) || {};
  const rollouts = count(data, 'bench_scale_events{action:controller_rollout}');
  const complete = countP50Max(data, 'bench_upgrade_rollout');
  const lost = ERROR_CLASSES.reduce((n, cls) => n + errors[cls], 0);
  return {
    kind: u.kind,
    namespace: u.namespace,
    name: u.name,
    container: u.container,
    image_from: u.imageTo ? (setup.image_from || null) : null,
    image_to: u.imageTo,
    annotation: ROLLED_AT,
    at_end: u.imageTo ? 'image_restored' : 'left_rolled',
    rollouts,
    incomplete: Math.max(0, rollouts - complete.count),
    rollout_ms: complete.count ? complete.max : null,
    pods_terminating: count(data, 'bench_scale_events{action:controller_pod_terminating}'),
    pods_ready: count(data, 'bench_scale_events{action:controller_pod_ready}'),
    steps,
    requests_lost: lost,
    gate: { max_errors: 0, passed: lost === 0 },
  };
}

// backendFailoverFor(data, f, errors): backend-failover's section. flaps: the flapping pod's
// transitions to unhealthy the churn VU saw (each a backend_unhealthy event); unhealthy_ms: how long
// it failed (answered 503, or in close mode closed connections unanswered), per flap; not_ready_ms:
// from its first failure until the API showed it not Ready (readiness mode; none in the others);
// requests_lost: the load's failed requests, every class (per flap: the report's errors by event,
// from Prometheus); gate: at most max_errors (failover.js gateMaxErrors says why readiness gets 0
// and errors and close a budget per flap).
function backendFailoverFor(data, f, errors) {
  const flaps = count(data, 'bench_scale_events{action:backend_unhealthy}');
  const lost = ERROR_CLASSES.reduce((n, cls) => n + errors[cls], 0);
  return {
    mode: f.mode,
    unhealthy_ms_set: f.unhealthyMs,
    healthy_ms_set: f.healthyMs,
    flaps,
    recovered: count(data, 'bench_scale_events{action:backend_healthy}'),
    unhealthy_ms: countP50Max(data, 'bench_failover_flap{measure:unhealthy}'),
    not_ready_ms: countP50Max(data, 'bench_failover_flap{measure:not_ready}'),
    requests_lost: lost,
    errors_per_flap: flaps > 0 ? round(lost / flaps, 1) : null,
    gate: { max_errors: f.maxErrors, errors_per_flap: f.perFlap, passed: lost <= f.maxErrors },
  };
}

// runnerFor(data, runtime, throttling): did the runner add latency of its own? Three witnesses:
// - the runner_lag scenario's samples (lag.js): cpu_bound when lag p95 is above lag_limit_ms or
//   p99 above lag_limit_p99_ms; null when no lag was sampled;
// - the Go runtime's own figures (k6/x/bench runtimeStats: how long ready goroutines waited for a
//   CPU, the garbage collector's CPU share): runtime_bound when either is above its limit, the
//   pauses a sleeping probe misses (lag.js runtimeVerdict);
// - its cgroup's CPU accounting (k6/x/bench cpuThrottling: the CFS quota periods in which the kernel
//   stopped it): cpu_throttled when above the limit, null when the cgroup could not be read
//   (lag.js throttleVerdict).
function runnerFor(data, runtime, throttling) {
  const m = data.metrics.bench_runner_lag;
  const v = m ? m.values : null;
  const lag = { count: 0, p50: null, p95: null, p99: null, max: null };
  if (v && v.count) {
    Object.assign(lag, { count: v.count, p50: round(v['p(50)'], 1), p95: round(v['p(95)'], 1),
      p99: round(v['p(99)'], 1), max: round(v.max, 1) });
  }
  const rt = runtime || {};
  const sched = rt.sched_latency_ms || {};
  const schedMs = { p50: round(sched.p50), p99: round(sched.p99), 'p99.9': round(sched.p999), max: round(sched.max) };
  const gcCpu = rt.gc_cpu_fraction === undefined ? null : round(rt.gc_cpu_fraction, 4);
  return {
    lag_ms: lag,
    lag_limit_ms: LAG_LIMIT_MS,
    lag_limit_p99_ms: LAG_LIMIT_P99_MS,
    cpu_bound: lagCpuBound(lag.p95, lag.p99),
    sched_latency_ms: schedMs,
    sched_limit_p99_ms: SCHED_LIMIT_P99_MS,
    gc_cycles: rt.gc_cycles === undefined ? null : rt.gc_cycles,
    gc_cpu_fraction: gcCpu,
    gc_cpu_limit: GC_CPU_LIMIT,
    go_gc: rt.gogc === undefined ? null : rt.gogc,
    go_memory_limit: rt.gomemlimit === undefined ? null : rt.gomemlimit,
    runtime_bound: runtimeVerdict(schedMs.p99, gcCpu),
    cgroup_cpu: cgroupCpuFor(throttling),
    cpu_throttled_limit: THROTTLED_LIMIT,
    cpu_throttled: throttleVerdict(throttling),
  };
}

// cgroupCpuFor(t): the cgroup's figures since the load began, rounded (nulls when unknown).
function cgroupCpuFor(t) {
  const th = t || {};
  const num = (v, digits) => (v === null || v === undefined ? null : round(v, digits));
  return {
    cgroup: th.cgroup || null,
    quota_cores: num(th.quota_cores, 3),
    periods: num(th.periods, 0),
    throttled_periods: num(th.throttled_periods, 0),
    throttled_ratio: num(th.throttled_ratio, 4),
    throttled_ms: num(th.throttled_ms, 1),
    cpu_cores_used: num(th.cpu_cores_used, 3),
    used_of_quota: num(th.used_of_quota, 3),
    seconds: num(th.seconds, 1),
    unknown_reason: th.unknown_reason || null,
  };
}

// buildSummary(data, report, runTags): the bench.summary/v1 object. runTags are the test-wide tags
// (exec.test.options.tags: --tag testid=..., --tag controller=...).
function buildSummary(data, report, runTags) {
  const cfg = report.cfg;
  const tags = runTags || {};
  const durationMs = report.durationMs;
  const received = count(data, `data_received{${LOAD}}`);
  const byPath = {};
  for (const p of report.parts || []) {
    const f = `scenario:${p.scenario}`;
    const m = data.metrics[`http_req_duration{${f}}`];
    byPath[p.name] = {
      requests: requestsFor(data, f, p.rateTarget, p.durationMs),
      latency_ms: latencyFrom(m && m.values),
      errors: errorsFor(data, f),
    };
  }
  const duration = data.metrics[`http_req_duration{${LOAD}}`];
  const summary = {
    schema: SCHEMA,
    testid: tags.testid || cfg.testid,
    scenario: report.scenario,
    controller: tags.controller || null,
    settings: {
      target_url: report.targetUrl,
      path: report.path,
      rate: report.rateTarget,
      duration_s: round(durationMs / 1000),
      // before duration_s, at the same rate, left out of every figure here (load.js measuredLoad)
      warmup_s: round(cfg.warmupMs / 1000),
      connections: cfg.connections,
      timeout_s: round(cfg.timeoutMs / 1000),
      keepalive: report.keepalive,
      tls: /^https:/.test(report.targetUrl),
      churn_pattern: report.churnPattern,
      // this runner's part of the load (1 = the whole run; k6-operator parallelism splits it)
      runner_share: round(runnerShare(), 6),
      // a request the transport re-sent after its reused connection died is a read error (wrk)
      replays: 'counted_as_read_errors',
      environment: cfg.environment,
      // the k6 release the runner is built from (k6/x/bench): runs on different releases are not alike
      k6_version: bench.k6Version() || null,
    },
    requests: requestsFor(data, LOAD, report.rateTarget, durationMs),
    latency_ms: latencyFrom(duration && duration.values),
    errors: errorsFor(data, LOAD),
    error_causes: errorCausesFor(data, LOAD),
    convergence_ms: { added: convergenceFor(data, 'added'), removed: convergenceFor(data, 'removed') },
    scale_events: count(data, 'bench_scale_events'),
    by_path: byPath,
    throughput: {
      bytes_received: received,
      bytes_received_per_s: round(received / (durationMs / 1000), 0),
    },
    runner: runnerFor(data, bench.runtimeStats(), bench.cpuThrottling()),
  };
  // the entry script's own settings (experiment({settings})), as the run used them
  if (cfg.settingTexts && Object.keys(cfg.settingTexts).length > 0) summary.settings.script = cfg.settingTexts;
  summary.requests.dropped_because = droppedBecause(summary);
  if (cfg.warmupMs > 0) summary.requests.warmup_requests = count(data, WARMUP_REQUESTS);
  if (report.controllerRestart) summary.controller_restart = controllerRestartFor(data, report.controllerRestart, summary.errors);
  if (report.dataplaneScale) summary.dataplane_scale = dataplaneScaleFor(data, report.dataplaneScale, summary.errors);
  if (report.controllerUpgrade) summary.controller_upgrade = controllerUpgradeFor(data, report.controllerUpgrade, summary.errors);
  if (report.backendFailover) summary.backend_failover = backendFailoverFor(data, report.backendFailover, summary.errors);
  if (report.longLived) summary.long_lived = longLived.section(data, report.cfg, summary.errors);
  if (report.extend) report.extend(data, summary);
  // the entry script's own section (experiment({section})): its keys are the script's
  if (report.section) summary.extra = report.section(data, summary);
  return summary;
}

// ---- text table --------------------------------------------------------------------------------

function fmt(v, digits) {
  if (v === null || v === undefined) return '-';
  if (typeof v !== 'number') return String(v);
  if (digits !== undefined) return v.toFixed(digits);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return v.toFixed(a < 10 ? 2 : a < 100 ? 1 : 0);
}

function pad(text, width) {
  const s = String(text);
  return s.length >= width ? s : ' '.repeat(width - s.length) + s;
}

// table(header, rows): right-aligned columns, the first column left-aligned.
function table(header, rows) {
  const all = [header].concat(rows).map((r) => r.map((c) => String(c)));
  const widths = header.map((_, i) => Math.max.apply(null, all.map((r) => r[i].length)));
  return all.map((r) => r.map((c, i) => (i === 0 ? c + ' '.repeat(widths[0] - c.length) : pad(c, widths[i] + 2))).join(''))
    .join('\n');
}

function humanBytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

function latencyRow(label, l) {
  return [label, fmt(l.min), fmt(l.p50), fmt(l.p90), fmt(l.p99), fmt(l['p99.9']), fmt(l['p99.99']),
    fmt(l['p99.999']), fmt(l['p99.9999']), fmt(l.max)];
}
const LATENCY_HEADER = ['Latency (ms)', 'min', 'p50', 'p90', 'p99', 'p99.9', 'p99.99', 'p99.999', 'p99.9999', 'max'];

function errorRow(label, e) {
  return [label].concat(ERROR_CLASSES.map((c) => e[c]));
}
const ERROR_HEADER = ['Errors', 'connection', 'timeout', 'read', '5xx', '4xx', 'other'];

// droppedBecause(summary): why k6 dropped iterations: 'runner' when the runner's verdict says it
// was short of CPU or paused itself, 'target' when its VUs were all waiting on responses, null when
// nothing was dropped.
function droppedBecause(s) {
  if (!s.requests.dropped_iterations) return null;
  const rn = s.runner || {};
  return rn.cpu_bound || rn.runtime_bound || rn.cpu_throttled ? 'runner' : 'target';
}

// warnings(summary): what makes the numbers less than they seem, said loudly.
function warnings(s) {
  const out = [];
  const r = s.requests;
  const rn = s.runner;
  if (s.end_record && !s.end_record.delivered) {
    out.push(`the end-of-run record did not reach Prometheus (${s.end_record.attempts} attempts: ${s.end_record.error}): `
      + 'if a final push of k6\'s remote write failed too, Prometheus lacks part of this runner\'s totals, and '
      + 'make results marks the run incomplete');
  }
  if (r.dropped_iterations > 0 && !s.max_rps) {
    const pct = r.total + r.dropped_iterations > 0 ? (100 * r.dropped_iterations) / (r.total + r.dropped_iterations) : 100;
    const why = droppedBecause(s) === 'runner'
      ? 'The runner itself was short of CPU (see its verdict below): give it more CPU or add runners.'
      : `Every connection (VU) was busy waiting on the target: ${r.dropped_iterations} requests could not be sent `
        + 'on time, a finding about the target (wrk2 would have counted their wait in its latency). To measure '
        + 'that wait instead, allow rate x timeout connections (BENCH_MAX_CONNECTIONS, loadtest.maxConnections).';
    out.push(`k6 DROPPED ${r.dropped_iterations} iterations (${pct.toFixed(2)}%): it could not hold ${r.rate_target} req/s `
      + `with BENCH_CONNECTIONS/BENCH_MAX_CONNECTIONS VUs. The latency above is not the latency at the target rate. ${why}`);
  }
  if (rn && rn.cpu_bound) {
    out.push(`k6 runner CPU-BOUND: its sleeping VUs woke ${rn.lag_ms.p95} ms late at p95, ${rn.lag_ms.p99} ms at p99 `
      + `(limits ${rn.lag_limit_ms} and ${rn.lag_limit_p99_ms} ms). `
      + 'The latency above includes k6 waiting for CPU; give the runners more CPU or more runners '
      + '(loadtest.parallelism), see scenarios/calibrate/README.md for sizing.');
  }
  if (rn && rn.cpu_throttled) {
    const c = rn.cgroup_cpu;
    out.push(`k6 runner CPU-THROTTLED: its cgroup's CPU quota (${c.quota_cores} cores) stopped it in `
      + `${(100 * c.throttled_ratio).toFixed(1)}% of the quota periods (${c.throttled_periods} of ${c.periods}, `
      + `limit ${100 * rn.cpu_throttled_limit}%), ${c.throttled_ms} ms in all; it used ${c.cpu_cores_used} cores. `
      + 'While stopped it sends nothing and times nothing: that wait is in the latency above. Raise the '
      + 'runner\'s CPU limit (loadtest.runner.resources) or add runners (loadtest.parallelism).');
  }
  if (rn && rn.runtime_bound) {
    out.push(`k6 runner PAUSED ITSELF: ready goroutines waited up to ${rn.sched_latency_ms.p99} ms for a CPU at p99 `
      + `(limit ${rn.sched_limit_p99_ms} ms) and the garbage collector took ${(100 * rn.gc_cpu_fraction).toFixed(1)}% of `
      + `its CPU (limit ${100 * rn.gc_cpu_limit}%; GOGC=${rn.go_gc || 'default'}). Those pauses are in the tail latency `
      + 'above. Run runners with GOGC=off and a GOMEMLIMIT (the chart does: loadtest.runner.gc), or give them more CPU.');
  }
  for (const [kind, k] of Object.entries((s.routes && s.routes.by_kind) || {})) {
    if (k.unconverged > 0) {
      out.push(`${k.unconverged} of ${k.created} ${kind} routes served no 200 within ${s.routes.timeout_ms} ms of their create call.`);
    }
    if (k.change_errors > 0) out.push(`route-change FAILED for ${kind}: ${k.change_errors} answers were not 2xx while routes changed.`);
  }
  const c = s.controller_restart;
  if (c && !c.gate.passed) {
    out.push(`controller-restart FAILED: ${c.requests_lost} requests lost while ${c.pods_deleted} controller pod(s) were deleted.`);
  }
  if (c && c.unrecovered > 0) out.push(`${c.unrecovered} deleted controller pod(s) did not recover before the end of the run.`);
  const dp = s.dataplane_scale;
  if (dp && !dp.gate.passed) {
    out.push(`dataplane-scale FAILED: ${dp.requests_lost} requests lost while the data plane was scaled in ${dp.steps.length} step(s).`);
  }
  if (dp && dp.unready > 0) out.push(`${dp.unready} data-plane scale step(s) were not Ready in time.`);
  const u = s.controller_upgrade;
  if (u && !u.gate.passed) {
    out.push(`controller-upgrade FAILED: ${u.requests_lost} requests lost while ${u.kind} ${u.name || ''} rolled.`);
  }
  if (u && u.incomplete > 0) out.push(`${u.incomplete} controller rollout(s) were not complete in time.`);
  const bf = s.backend_failover;
  if (bf && !bf.gate.passed) {
    out.push(`backend-failover FAILED: ${bf.requests_lost} requests lost over ${bf.flaps} flap(s) of the flapping `
      + `backend pod (${bf.mode} mode; at most ${bf.gate.max_errors} allowed).`);
  }
  if (bf && bf.flaps === 0) out.push('backend-failover: the flapping backend pod never turned unhealthy during the run.');
  if (s.long_lived && longLived.warning(s.long_lived)) out.push(longLived.warning(s.long_lived));
  if (r.total === 0) out.push('no request completed: check BENCH_TARGET_URL and the route.');
  else if (!rateHeld(r) && r.dropped_iterations === 0 && !s.max_rps) {
    out.push(`achieved ${r.rate_achieved} req/s, below ${RATE_HELD_SHARE * 100}% of the target ${r.rate_target} req/s.`);
  }
  return out;
}

function formatText(s) {
  const st = s.settings;
  const lines = [];
  lines.push(`bench ${s.scenario}   testid ${s.testid}   controller ${s.controller || '-'}`);
  lines.push(`target ${st.target_url}${st.path}   ${st.rate} req/s for ${st.duration_s} s   ${st.connections} connections   `
    + `timeout ${st.timeout_s} s   keep-alive ${st.keepalive ? 'on' : 'off'}   TLS ${st.tls ? 'on' : 'off'}`);
  if (st.churn_pattern || s.scale_events > 0) {
    lines.push(`churn ${st.churn_pattern || '-'}   scale events ${s.scale_events}`);
  }
  if (st.warmup_s > 0) {
    lines.push(`warm-up ${st.warmup_s} s before it at the same rate: ${s.requests.warmup_requests} requests, left out of `
      + 'every figure below');
  }
  if (st.script) lines.push(`script settings   ${Object.keys(st.script).map((k) => `${k}=${st.script[k]}`).join('   ')}`);
  lines.push('');
  const r = s.requests;
  lines.push(table(['Requests', 'target/s', 'achieved/s', 'total', 'dropped'],
    [['load', r.rate_target, fmt(r.rate_achieved, 1), r.total, r.dropped_iterations]]));
  lines.push('');
  lines.push(table(LATENCY_HEADER, [latencyRow('all requests', s.latency_ms)]));
  lines.push('');
  lines.push(table(ERROR_HEADER, [errorRow('count', s.errors)]));
  if (s.scale_events > 0) {
    // A runner sees neither the other runners nor the controller's reloads: the timeline is Prometheus'.
    lines.push('errors by event: make results (summary.json attribution) and the report attribute each error to the '
      + 'event before it within a window; live: the run overview\'s Errors near events row');
  }
  const c = s.convergence_ms;
  if (c.added.count + c.removed.count > 0 || st.churn_pattern || s.scale_events > 0) {
    lines.push('');
    lines.push(table(['Endpoint convergence (ms)', 'count', 'p50', 'max'],
      [['added (Ready -> first response)', c.added.count, fmt(c.added.p50), fmt(c.added.max)],
        ['removed (not Ready -> last response)', c.removed.count, fmt(c.removed.p50), fmt(c.removed.max)]]));
  }
  const parts = Object.keys(s.by_path);
  if (parts.length > 0) {
    lines.push('');
    lines.push(table(['By path', 'target/s', 'achieved/s', 'total', 'dropped', 'p50', 'p99', 'p99.99', 'max', 'errors'],
      parts.map((name) => {
        const p = s.by_path[name];
        const errs = ERROR_CLASSES.reduce((n, cls) => n + p.errors[cls], 0);
        return [name, p.requests.rate_target, fmt(p.requests.rate_achieved, 1), p.requests.total,
          p.requests.dropped_iterations, fmt(p.latency_ms.p50), fmt(p.latency_ms.p99), fmt(p.latency_ms['p99.99']),
          fmt(p.latency_ms.max), errs];
      })));
  }
  if (s.routes) lines.push('', routesText(s.routes));
  if (s.controller_restart) lines.push('', controllerRestartText(s.controller_restart));
  if (s.dataplane_scale) lines.push('', dataplaneScaleText(s.dataplane_scale));
  if (s.controller_upgrade) lines.push('', controllerUpgradeText(s.controller_upgrade));
  if (s.backend_failover) lines.push('', backendFailoverText(s.backend_failover));
  if (s.long_lived) lines.push('', longLived.text(s.long_lived, table));
  lines.push('');
  lines.push(`received ${humanBytes(s.throughput.bytes_received)} (${humanBytes(s.throughput.bytes_received_per_s)}/s)`);
  if (s.runner) {
    const l = s.runner.lag_ms;
    const verdict = s.runner.cpu_bound === null ? 'not sampled' : s.runner.cpu_bound ? 'CPU-BOUND' : 'ok';
    lines.push(`runner lag (ms)  p50 ${fmt(l.p50)}  p95 ${fmt(l.p95)}  p99 ${fmt(l.p99)}  max ${fmt(l.max)}   `
      + `limits p95 ${s.runner.lag_limit_ms} p99 ${s.runner.lag_limit_p99_ms}: ${verdict}`);
    if (s.runner.cgroup_cpu) lines.push(cgroupLine(s.runner));
  }
  if (s.max_rps) {
    const m = s.max_rps;
    lines.push('');
    lines.push(`Max RPS budget: p99 <= ${m.budget.p99_ms} ms, errors <= ${m.budget.error_ratio * 100}%, no dropped iterations`);
    lines.push(table(['Step', 'target/s', 'achieved/s', 'p99 (ms)', 'errors %', 'dropped', 'within budget'],
      m.steps.map((x, i) => [String(i + 1), x.rate_target, fmt(x.rate_achieved, 1), fmt(x.p99_ms),
        fmt(x.error_ratio * 100, 3), x.dropped_iterations, x.ok ? 'yes' : 'NO'])));
    lines.push(m.knee_rate === null ? 'knee: no step held the budget' : `knee: ${m.knee_rate} req/s (highest step within budget)`);
  }
  for (const w of warnings(s)) lines.push(`!! WARNING: ${w}`);
  return lines.join('\n') + '\n';
}

// cgroupLine(runner): the cgroup witness's line of the table.
function cgroupLine(rn) {
  const c = rn.cgroup_cpu;
  if (rn.cpu_throttled === null || rn.cpu_throttled === undefined) {
    return `runner CPU quota: unknown (${c.unknown_reason || 'no cgroup CPU accounting'})`;
  }
  const verdict = rn.cpu_throttled ? 'THROTTLED' : 'ok';
  if (c.quota_cores === null) return `runner CPU quota: none (cgroup ${c.cgroup}), used ${fmt(c.cpu_cores_used)} cores: ${verdict}`;
  return `runner CPU quota ${fmt(c.quota_cores)} cores, used ${fmt(c.cpu_cores_used)}, throttled in `
    + `${c.throttled_periods} of ${c.periods} periods (${(100 * c.throttled_ratio).toFixed(1)}%, limit `
    + `${100 * rn.cpu_throttled_limit}%): ${verdict}`;
}

// controllerRestartText(c): controller-restart's table and its gate.
function controllerRestartText(c) {
  const r = c.replaced_ms;
  const v = c.recovered_ms;
  return [`Controller restart: pods ${c.selector} in ${c.namespace}, deleted one at a time`,
    table(['Controller pods (ms from delete)', 'count', 'p50', 'max'],
      [['replaced (replacement Ready)', r.count, fmt(r.p50), fmt(r.max)],
        ['recovered (path answering again)', v.count, fmt(v.p50), fmt(v.max)]]),
    `deleted ${c.pods_deleted}   unrecovered ${c.unrecovered}   requests lost ${c.requests_lost}   `
      + `zero-error gate: ${c.gate.passed ? 'passed' : 'FAILED'}`].join('\n');
}

// dataplaneScaleText(d): dataplane-scale's steps and its gate.
function dataplaneScaleText(d) {
  const via = d.scaled && !d.scaled.startsWith('Deployment ') ? ` through ${d.scaled}` : '';
  return [`Data-plane scale: Deployment ${d.namespace}/${d.deployment}${via}, ${d.mode} through ${d.levels.join(',')}`,
    table(['Step', 'replicas', 'Ready after (ms)', 'probes failed'],
      d.steps.map((st) => [String(st.step), `${fmt(st.from)} -> ${st.to}`, st.ready_ms === null ? 'not Ready' : fmt(st.ready_ms),
        st.probe_failures])),
    `levels reached ${d.levels_reached.join(',') || 'none'}   not Ready ${d.unready}   requests lost ${d.requests_lost}   `
      + `zero-error gate: ${d.gate.passed ? 'passed' : 'FAILED'}`].join('\n');
}

// controllerUpgradeText(u): controller-upgrade's pods and its gate.
function controllerUpgradeText(u) {
  const change = u.image_to ? `container ${u.container} image ${u.image_from || '?'} -> ${u.image_to} (put back at the end)`
    : `pod template annotation ${u.annotation} (left rolled)`;
  return [`Controller upgrade: ${u.kind} ${u.namespace}/${u.name}, ${change}`,
    table(['Step', 'old pod terminating (ms)', 'new pod Ready (ms)'],
      u.steps.map((st) => [String(st.step), fmt(st.old_terminating_ms), fmt(st.new_ready_ms)])),
    `rollout ${u.rollout_ms === null ? 'NOT complete' : `complete after ${fmt(u.rollout_ms)} ms`}   requests lost `
      + `${u.requests_lost}   zero-error gate: ${u.gate.passed ? 'passed' : 'FAILED'}`].join('\n');
}

// backendFailoverText(f): backend-failover's flaps and its gate.
function backendFailoverText(f) {
  const u = f.unhealthy_ms;
  const n = f.not_ready_ms;
  return [`Backend failover: one backend pod flapping (${f.mode}), unhealthy ${f.unhealthy_ms_set / 1000} s `
    + `then healthy ${f.healthy_ms_set / 1000} s`,
  table(['Flapping pod (ms)', 'count', 'p50', 'max'],
    [[`${UNHEALTHY_ROW[f.mode] || 'unhealthy'} (per flap)`, u.count, fmt(u.p50), fmt(u.max)],
      ['first failure to not Ready', n.count, fmt(n.p50), fmt(n.max)]]),
  `flaps ${f.flaps}   requests lost ${f.requests_lost} (${fmt(f.errors_per_flap)} per flap)   `
    + `gate (at most ${f.gate.max_errors}): ${f.gate.passed ? 'passed' : 'FAILED'}`].join('\n');
}

// routesText(routes): the route experiments' table (route-experiment.js), one row per route kind.
function routesText(r) {
  const kinds = Object.keys(r.by_kind);
  const rows = kinds.map((kind) => {
    const k = r.by_kind[kind];
    const p = k.propagation_ms;
    const pre = k.pre_ready_statuses;
    const otherPre = Object.keys(pre).filter((x) => x !== '404' && x !== '503').reduce((n, x) => n + pre[x], 0);
    return [kind, k.created, k.serving, k.unconverged, fmt(p.p50), fmt(p.p90), fmt(p.p99), fmt(p.max), pre['404'],
      pre['503'], otherPre, k.changes === null ? '-' : k.changes, k.load_non_2xx];
  });
  const out = [`Routes (${r.experiment}, ${r.count} per kind)`, table(['Routes', 'created', 'serving', 'unconverged',
    'p50 ms', 'p90 ms', 'p99 ms', 'max ms', '404s', '503s', 'other', 'changes', 'non-2xx'], rows)];
  for (const kind of kinds) {
    const m = r.by_kind[kind].scale_ms;
    if (m) {
      out.push(`${kind}: ${r.count} routes applied in ${fmt(m.applied)} ms; all serving ${m.all_serving === null
        ? 'NOT reached' : `${fmt(m.all_serving)} ms after the first create, ${fmt(m.after_last_apply)} ms after the last`}`);
    }
  }
  out.push('(ms from a route\'s create call to its first 200; 404s/503s/other: probe answers before it; non-2xx: load '
    + 'answers that were not 2xx)');
  return out.join('\n');
}

// summaryOutputs(summary): what handleSummary returns.
function summaryOutputs(s, dir, textLine) {
  const json = JSON.stringify(s);
  // the entry script's own line (experiment({textLine})) closes the table
  const own = textLine ? textLine(s) : '';
  const text = own ? `${formatText(s)}\n${own}` : formatText(s);
  const base = dir.endsWith('/') ? dir : `${dir}/`;
  const out = {
    stdout: `\n${text}\nBENCH_SUMMARY_JSON_BEGIN\n${json}\nBENCH_SUMMARY_JSON_END\n`,
  };
  out[`${base}summary.json`] = `${JSON.stringify(s, null, 2)}\n`;
  out[`${base}summary.txt`] = text;
  return out;
}

// makeHandleSummary(report): the entry script's handleSummary.
function makeHandleSummary(report) {
  return function handleSummary(data) {
    let tags = {};
    try {
      tags = exec.test.options.tags || {};
    } catch (e) {
      tags = {};
    }
    const summary = buildSummary(data, report, tags);
    // after k6's outputs stopped (their last push is done or lost): this runner's totals once more
    summary.end_record = sendRunEnd(summary, tags);
    return summaryOutputs(summary, report.cfg.summaryDir, report.textLine);
  };
}

module.exports = {
  SCHEMA,
  summaryThresholds,
  latencyFrom,
  errorsFor,
  errorCausesFor,
  requestsFor,
  runnerFor,
  buildSummary,
  table,
  droppedBecause,
  warnings,
  formatText,
  summaryOutputs,
  makeHandleSummary,
};

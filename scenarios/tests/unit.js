// Unit tests of scenarios/lib, run by k6 itself (the same JS runtime as the scenarios):
//   k6 run -q --log-format raw scenarios/tests/unit.js
// Logs one "UNIT PASS <name>" or "UNIT FAIL <name>: <why>" line per case (console.log, on stderr) and
// a closing "unit: N passed, N failed" line; k6 exits 99 when a case fails (threshold).
import { Counter } from 'k6/metrics';
import {
  loadConfig, parseDuration, parseChurnPattern, parseLabelSelector, parseBool, parseUrl, DEFAULTS,
} from '../lib/config.js';
import * as parse from '../lib/parse.js';
import { durationMs, parseDuration as durationAlone } from '../lib/duration.js';
import { newChurnContext, isChurnOver } from '../lib/churn-context.js';
import { experiment as steadyExperiment } from '../lib/experiment.js';
import { experiment as churnExperiment } from '../lib/churn-experiment.js';
import { classifyError, countError, ERROR_CAUSES, ERROR_CLASSES } from '../lib/errors.js';
import { newConvergenceTracker } from '../lib/convergence.js';
import { newRecoveryTracker } from '../lib/recovery.js';
import { dataplaneSteps, MAX_STEPS, newDataplaneTracker, scaledObject } from '../lib/dataplane.js';
import { newRolloutTracker, rolledOut, ROLLED_AT } from '../lib/rollout.js';
import {
  flapWindows, gateMaxErrors, newFailoverTracker, pollPath, runBudget, unhealthyAnswer, ACTIONS as FAILOVER_ACTIONS,
} from '../lib/failover.js';
import {
  buildSummary, droppedBecause, formatText, summaryOutputs, summaryThresholds, table, SCHEMA, warnings,
} from '../lib/summary-writer.js';
import {
  GC_CPU_LIMIT, LAG_LIMIT_MS, LAG_LIMIT_P99_MS, lagCpuBound, runtimeVerdict, SCHED_LIMIT_P99_MS, THROTTLED_LIMIT,
  throttleVerdict,
} from '../lib/lag.js';
import { kubeCalls, RESTORE_ANNOTATION } from '../lib/kube.js';
import { judgeRunnerStep, judgeStep, kneeRate, limitedBy } from '../lib/knee.js';
import { rateHeld } from '../lib/verdicts.js';
import { baseOptions, measuredLoad, noDroppedIterations, staircase } from '../lib/load.js';
import { buildRoute, preReadyBucket, routeHost, runLabel, ROUTE_LABEL } from '../lib/routes.js';
import { longLivedChurn, reloadRoute, streamTarget } from '../lib/stream-disruptions.js';
import * as longLivedSummary from '../lib/long-lived-summary.js';
import { checkPlannedMemory, plannedVUs, RUNNER_MEMORY } from '../lib/memory-plan.js';
import { planShape, shapeScenarios } from '../lib/load-shape.js';

const { matchesLabels, isPodReady, scaleDeployment, restartDeployment, restoreDeployment, rollWorkload } = kubeCalls();

const failures = new Counter('unit_failures');

// scenarios/interfaces.md (linked from README.md) is where users read the variables and error
// classes: the checks below compare the code with it (init context; k6 resolves the path from this
// file's directory). The name README stays for the checks' messages.
const README = open('../interfaces.md');
// The error taxonomy's cases, shared with the Go rules' own test (xk6-bench classify_test.go).
const CLASSIFY_CASES = JSON.parse(open('./classify-cases.json')).cases;
// The duration grammar's examples (scenarios/contract.json durations), read once in this one-VU test.
const DURATIONS = JSON.parse(open('../contract.json')).durations;

export const options = {
  iterations: 1,
  vus: 1,
  thresholds: { unit_failures: ['count==0'] },
};

let passed = 0;
let failed = 0;

function check(name, fn) {
  try {
    fn();
    passed += 1;
    console.log(`UNIT PASS ${name}`);
  } catch (e) {
    failed += 1;
    failures.add(1);
    console.log(`UNIT FAIL ${name}: ${e && e.message ? e.message : e}`);
  }
}

function eq(actual, expected, what) {
  const a = JSON.stringify(actual);
  const b = JSON.stringify(expected);
  if (a !== b) throw new Error(`${what || 'value'}: expected ${b}, got ${a}`);
}

function throwsWith(fn, pattern) {
  try {
    fn();
  } catch (e) {
    if (!pattern.test(String(e.message))) throw new Error(`error "${e.message}" does not match ${pattern}`);
    return;
  }
  throw new Error(`expected an error matching ${pattern}`);
}

// readmeVariables(): {name: default} from README's "Scenario configuration" table. A default cell is
// a `literal`, "empty", or "= <what it derives from>" (empty in DEFAULTS); anything else is an error.
function readmeVariables() {
  const vars = {};
  for (const line of README.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 4 || !cells[1].startsWith('`BENCH_')) continue;
    const literal = /^`([^`]*)`/.exec(cells[2]);
    if (!literal && cells[2] !== 'empty' && !cells[2].startsWith('= ')) {
      throw new Error(`README row ${cells[1]}: default "${cells[2]}" is not a \`literal\`, empty or = derived`);
    }
    for (const name of cells[1].match(/`BENCH_[A-Z_]+`/g)) vars[name.slice(1, -1)] = literal ? literal[1] : '';
  }
  return vars;
}

function configTests() {
  check('config: defaults match the README table', () => {
    const c = loadConfig({});
    eq([c.targetUrl, c.path, c.rate, c.durationMs, c.connections, c.maxConnections, c.timeoutMs, c.keepalive,
      c.insecureTls, c.namespace, c.deployment, c.testid, c.summaryDir],
    ['http://127.0.0.1:8080', '/', 1000, 60000, 100, 100, 2000, true, true, 'default', 'bench-backend', 'local', '.']);
    eq(c.churnPattern, [{ replicas: 5, holdMs: 12000 }, { replicas: 7, holdMs: 10000 }], 'pattern');
    eq(c.podSelector, { 'app.kubernetes.io/component': 'backend' }, 'selector');
  });
  check('config: env wins over experiment overrides, empty means unset', () => {
    eq(loadConfig({}, { BENCH_PATH: '/bytes/1m' }).path, '/bytes/1m');
    eq(loadConfig({ KUBECONFIG: ':/k/a:/k/b' }).kubeconfig, '/k/a');
    eq(loadConfig({ KUBECONFIG: '/k/a', BENCH_KUBECONFIG: '/k/own' }).kubeconfig, '/k/own');
    eq(loadConfig({ KUBECONFIG: '/k/a' }).apiSource, 'kubeconfig /k/a (KUBECONFIG)');
    eq(loadConfig({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }).apiSource, 'the in-cluster service account');
    eq(/^no Kubernetes API \(not in a pod/.test(loadConfig({}).apiSource), true);
    eq(loadConfig({ BENCH_PATH: '/bytes/4k' }, { BENCH_PATH: '/bytes/1m' }).path, '/bytes/4k');
    eq(loadConfig({ BENCH_PATH: '' }, { BENCH_PATH: '/bytes/1m' }).path, '/bytes/1m');
  });
  check('config: durations', () => {
    eq([parseDuration('X', '500ms'), parseDuration('X', '12s'), parseDuration('X', '1m30s'), parseDuration('X', '250us'),
      parseDuration('X', '1h'), parseDuration('X', '1.5s')], [500, 12000, 90000, 0.25, 3600000, 1500]);
  });
  // The grammar's table (scenarios/contract.json durations.examples), the one every parser is tested
  // against: durationMs gives each accepted text its milliseconds and NaN for each refused one.
  for (const [text, ms] of DURATIONS.examples.accepts) {
    check(`duration grammar: ${JSON.stringify(text)} is ${ms} ms`, () => eq(durationMs(text), ms));
  }
  for (const text of DURATIONS.examples.refuses) {
    check(`duration grammar: ${JSON.stringify(text)} is refused`, () => eq(Number.isNaN(durationMs(text)), true));
  }
  check('duration grammar: the examples use every unit of the contract', () => {
    const used = DURATIONS.examples.accepts.map(([text]) => text.replace(/^[0-9.]+/, ''));
    eq(Object.keys(DURATIONS.unitsMs).filter((u) => !used.includes(u)), []);
  });
  for (const bad of ['abc', '-5s', '0s', '10x', '', '5s5', '2']) {
    check(`config: duration ${JSON.stringify(bad)} is refused with the variable name`, () => {
      throwsWith(() => loadConfig({ BENCH_DURATION: bad === '' ? ' ' : bad }), /BENCH_DURATION=.*positive duration/);
    });
  }
  check('config: warm-up: none by default, 0s and 0ms are none, else a duration up to BENCH_DURATION', () => {
    eq([loadConfig({}).warmupMs, loadConfig({ BENCH_WARMUP: '0s' }).warmupMs, loadConfig({ BENCH_WARMUP: '0ms' }).warmupMs,
      loadConfig({ BENCH_WARMUP: '10s' }).warmupMs, loadConfig({ BENCH_WARMUP: '1m', BENCH_DURATION: '1m' }).warmupMs],
    [0, 0, 0, 10000, 60000]);
  });
  for (const [bad, why] of [['-5s', 'expected 0s'], ['abc', 'expected 0s'], ['0', 'expected 0s'],
    ['2m', 'at most BENCH_DURATION \\(60 s\\)']]) {
    check(`config: warm-up ${JSON.stringify(bad)} is refused with the variable name`, () => {
      throwsWith(() => loadConfig({ BENCH_WARMUP: bad }), new RegExp(`invalid BENCH_WARMUP="${bad}": .*${why}`));
    });
  }
  check('config: negative rate names BENCH_RATE and the allowed range', () => {
    throwsWith(() => loadConfig({ BENCH_RATE: '-5' }), /invalid BENCH_RATE="-5": expected a whole number from 1/);
  });
  check('config: zero and fractional connections are refused', () => {
    throwsWith(() => loadConfig({ BENCH_CONNECTIONS: '0' }), /BENCH_CONNECTIONS="0"/);
    throwsWith(() => loadConfig({ BENCH_CONNECTIONS: '1.5' }), /BENCH_CONNECTIONS="1.5"/);
  });
  check('config: max connections below connections is refused', () => {
    throwsWith(() => loadConfig({ BENCH_CONNECTIONS: '10', BENCH_MAX_CONNECTIONS: '5' }),
      /BENCH_MAX_CONNECTIONS="5": must be at least BENCH_CONNECTIONS \(10\)/);
    eq(loadConfig({ BENCH_CONNECTIONS: '10', BENCH_MAX_CONNECTIONS: '50' }).maxConnections, 50);
  });
  check('config: churn pattern', () => {
    eq(parseChurnPattern('P', '5:12s, 7:10s ,0:1m'), [{ replicas: 5, holdMs: 12000 }, { replicas: 7, holdMs: 10000 },
      { replicas: 0, holdMs: 60000 }]);
  });
  for (const bad of ['5', '5:', 'x:1s', '5:12s,', '-1:5s', '5:0s', '1001:1s', '5:12s:3']) {
    check(`config: churn pattern ${JSON.stringify(bad)} is refused`, () => {
      throwsWith(() => loadConfig({ BENCH_CHURN_PATTERN: bad }), /invalid BENCH_CHURN_PATTERN=.*replicas:hold/);
    });
  }
  check('config: booleans', () => {
    eq([parseBool('B', 'true'), parseBool('B', 'FALSE'), parseBool('B', '1'), parseBool('B', 'no')], [true, false, true, false]);
    throwsWith(() => loadConfig({ BENCH_KEEPALIVE: 'maybe' }), /BENCH_KEEPALIVE="maybe": expected true or false/);
  });
  check('config: URLs', () => {
    eq(parseUrl('U', 'https://bench.local/'), 'https://bench.local');
    eq(parseUrl('U', 'http://10.0.0.1:30080/prefix'), 'http://10.0.0.1:30080/prefix');
    throwsWith(() => loadConfig({ BENCH_TARGET_URL: 'ftp://x' }), /BENCH_TARGET_URL="ftp:\/\/x": expected an http/);
    throwsWith(() => loadConfig({ BENCH_URL_POD: '127.0.0.1:8080' }), /BENCH_URL_POD=/);
    eq(loadConfig({ BENCH_URL_POD: 'http://p:8080' }).pathUrls, { pod: 'http://p:8080' });
  });
  check('config: path must start with /', () => {
    throwsWith(() => loadConfig({ BENCH_PATH: 'bytes/4k' }), /BENCH_PATH="bytes\/4k": expected a path starting with \//);
  });
  check('config: label selector', () => {
    eq(parseLabelSelector('S', 'a=b, app.kubernetes.io/name=bench'), { a: 'b', 'app.kubernetes.io/name': 'bench' });
    throwsWith(() => loadConfig({ BENCH_POD_SELECTOR: 'app in (a,b)' }), /BENCH_POD_SELECTOR=.*key=value/);
  });
  check('config: names and test ids', () => {
    throwsWith(() => loadConfig({ BENCH_NAMESPACE: 'Bad_NS' }), /BENCH_NAMESPACE="Bad_NS"/);
    throwsWith(() => loadConfig({ BENCH_TESTID: 'a b' }), /BENCH_TESTID="a b"/);
  });
  check('config: environment (what the run ran on) is a flat JSON object', () => {
    eq(loadConfig({}).environment, {});
    eq(loadConfig({ BENCH_ENVIRONMENT: '{"controller_version": "v1.2.3", "backend_replicas": 5, "tls": true}' }).environment,
      { controller_version: 'v1.2.3', backend_replicas: 5, tls: true });
  });
  for (const bad of ['{', '[1]', '"x"', '{"a": {"b": 1}}', '{"Bad Key": 1}', '{"a": null}']) {
    check(`config: environment ${JSON.stringify(bad)} is refused`, () => {
      throwsWith(() => loadConfig({ BENCH_ENVIRONMENT: bad }), /invalid BENCH_ENVIRONMENT=.*JSON object of snake_case keys/);
    });
  }
  check('config: an unknown BENCH_ variable is refused with the allowed list', () => {
    throwsWith(() => loadConfig({ BENCH_RATEE: '5' }), /unknown variable BENCH_RATEE: allowed are BENCH_TARGET_URL, .*BENCH_SUMMARY_DIR/);
  });
  check('config: Kubernetes service-link variables of a release named bench are ignored', () => {
    const links = {
      BENCH_BACKEND_SERVICE_HOST: '10.96.0.10', BENCH_BACKEND_SERVICE_PORT: '80',
      BENCH_BACKEND_SERVICE_PORT_HTTP: '80', BENCH_BACKEND_PORT: 'tcp://10.96.0.10:80',
      BENCH_BACKEND_NODEPORT_PORT_80_TCP: 'tcp://10.96.0.11:80', BENCH_BACKEND_NODEPORT_PORT_80_TCP_PORT: '80',
      BENCH_BACKEND_NODEPORT_PORT_80_TCP_PROTO: 'tcp', BENCH_BACKEND_NODEPORT_PORT_80_TCP_ADDR: '10.96.0.11',
    };
    eq(loadConfig(links).rate, 1000);
    throwsWith(() => loadConfig({ BENCH_RATE_PORT_X: '5' }), /unknown variable BENCH_RATE_PORT_X/);
  });
  check('config: tooling and non-BENCH variables are ignored', () => {
    eq(loadConfig({ BENCH_ROOT: '/x', BENCH_CACHE: '/y', BENCH_TOOLS: '/z', HOME: '/root' }).rate, 1000);
    eq(loadConfig({ BENCH_TEST_SERIAL: '1', BENCH_TEST_PARTS: 'report', BENCH_E2E_KEEP_CLUSTER: '1' }).rate, 1000);
    throwsWith(() => loadConfig({ BENCH_TESTS: '1' }), /unknown variable BENCH_TESTS/);
  });
  check('config: each default, set explicitly, is accepted and gives the config of an unset variable', () => {
    const unset = loadConfig({});
    for (const [name, value] of Object.entries(DEFAULTS)) eq(loadConfig({ [name]: value }), unset, name);
  });
  check('config: README lists every variable with the default config.js has, and no other', () => {
    const documented = readmeVariables();
    eq(Object.keys(documented).sort(), Object.keys(DEFAULTS).sort(), 'variables in README vs config.js');
    for (const [name, value] of Object.entries(DEFAULTS)) eq(documented[name], value, `README default of ${name}`);
  });
}

function errorTests() {
  // [status, error_code, message, written, tls, class, cause, why?]: the Go extension's tests run the same rows
  const cases = CLASSIFY_CASES;
  for (const [status, code, message, written, tls, cls, cause] of cases) {
    check(`errors: status ${status} code ${code} "${message}" written=${written} tls=${tls} -> ${cls}/${cause}`,
      () => eq(classifyError(status, code, message, written, tls), { class: cls, cause }));
  }
  for (const status of [200, 204, 301]) {
    check(`errors: status ${status} without error code is a success`, () => eq(classifyError(status, 0, '', true, false), null));
  }
  check('errors: a response k6 was waiting for was written, whether or not k6 timed its sending', () => {
    const res = (sending, waiting) => ({ status: 0, error_code: 1000, error: 'EOF', url: 'http://x/', timings: { sending, waiting } });
    eq([countError(res(0, 3)), countError(res(2, 0)), countError(res(0, 0))], ['read', 'read', 'connection']);
  });
  check('errors: every cause found above belongs to its class in ERROR_CAUSES', () => {
    for (const [, , , , , cls, cause] of cases) {
      if (!ERROR_CAUSES[cls].includes(cause)) throw new Error(`${cls}/${cause} missing from ERROR_CAUSES`);
    }
  });
  check('errors: the classes are the README metrics table\'s, in its order', () => {
    const row = /\| `bench_errors` \| Counter \| `class` = ([a-z0-9_, ]+);/.exec(README);
    if (!row) throw new Error('README has no bench_errors row with "`class` = ...;"');
    eq(ERROR_CLASSES, row[1].split(',').map((c) => c.trim()));
  });
}

function recoveryTests() {
  check('recovery: one Traefik pod deleted, probes fail until its replacement serves', () => {
    const r = newRecoveryTracker({ quietMs: 1000 });
    r.deleted('t-1', 1, 1000);
    r.probed(true, 1100); // still draining
    r.controllerPods([], ['t-1'], 1250);
    r.probed(false, 1300);
    r.controllerPods([], [], 2000); // gone
    r.probed(false, 3000);
    r.controllerPods(['t-2'], ['t-2'], 3500); // replacement Ready
    r.probed(true, 3600);
    r.tick(4000);
    eq([r.busy(), r.take()], [true, []], 'not final before a quiet second');
    r.probed(true, 4650);
    r.tick(4650);
    eq([r.busy(), r.take(), r.unrecovered], [false, [{ replaced_ms: 2500, recovered_ms: 2600 }], 0]);
  });
  check('recovery: with two replicas and no failed probe, recovered is 0 once the old pod is gone', () => {
    const r = newRecoveryTracker({ quietMs: 1000 });
    r.deleted('t-1', 2, 0);
    r.controllerPods(['t-2'], ['t-1', 't-2'], 250);
    r.controllerPods(['t-2', 't-3'], ['t-1', 't-2', 't-3'], 2000);
    r.probed(true, 2100);
    r.tick(2100);
    eq(r.busy(), true, 'the deleted pod is still terminating');
    r.controllerPods(['t-2', 't-3'], ['t-2', 't-3'], 2250);
    r.tick(2300);
    eq(r.take(), [{ replaced_ms: 2000, recovered_ms: 0 }]);
  });
  check('recovery: a failure after the recovery starts it again; unrecovered at the end or after giving up', () => {
    const r = newRecoveryTracker({ quietMs: 1000, giveUpMs: 10000 });
    r.deleted('a', 1, 0);
    r.controllerPods(['b'], ['b'], 500);
    r.probed(false, 600);
    r.probed(true, 700);
    r.probed(false, 900);
    r.probed(true, 1200);
    r.tick(2200);
    eq(r.take(), [{ replaced_ms: 500, recovered_ms: 1200 }]);
    r.deleted('b', 1, 3000);
    r.tick(13000);
    eq([r.busy(), r.unrecovered], [false, 1]);
    r.deleted('c', 1, 14000);
    r.finish(15000);
    eq([r.busy(), r.unrecovered, r.take()], [false, 2, []]);
  });
}

function convergenceTests() {
  check('convergence: pods Ready at the first poll are the baseline, not events', () => {
    const t = newConvergenceTracker();
    t.podsReady(['a', 'b'], 0);
    t.seen('a', 10);
    t.tick(5000);
    eq(t.take(), []);
  });
  check('convergence: added = Ready poll -> first response', () => {
    const t = newConvergenceTracker();
    t.podsReady(['a'], 0);
    t.podsReady(['a', 'c'], 250);
    t.seen('a', 300);
    t.seen('c', 400);
    t.seen('c', 450);
    eq(t.take(), [{ event: 'added', ms: 150 }]);
  });
  check('convergence: a pod serving between two polls counts as 0 ms', () => {
    const t = newConvergenceTracker();
    t.podsReady(['a'], 0);
    t.podsReady(['a'], 250);
    t.seen('d', 300);
    t.podsReady(['a', 'd'], 500);
    eq(t.take(), [{ event: 'added', ms: 0 }]);
  });
  check('convergence: a response stamped just before the Ready poll counts as 0 ms, never negative', () => {
    const t = newConvergenceTracker();
    t.podsReady(['a'], 0);
    t.podsReady(['a', 'c'], 250);
    t.seen('c', 240);
    eq(t.take(), [{ event: 'added', ms: 0 }]);
  });
  check('convergence: a pod seen long before it turned Ready again is pending, not 0', () => {
    const t = newConvergenceTracker({ quietMs: 100 });
    t.podsReady(['a', 'b'], 0);
    t.seen('b', 10);
    t.podsReady(['a'], 250);
    t.tick(400);
    eq(t.take(), [{ event: 'removed', ms: 0 }]);
    t.podsReady(['a', 'b'], 5000);
    t.seen('b', 5600);
    eq(t.take(), [{ event: 'added', ms: 600 }]);
  });
  check('convergence: removed = not Ready poll -> last response, final after the quiet window', () => {
    const t = newConvergenceTracker({ quietMs: 1500 });
    t.podsReady(['a', 'd'], 0);
    t.podsReady(['a'], 750);
    t.seen('d', 900);
    t.tick(2000);
    eq(t.take(), [], 'still within the quiet window');
    t.tick(2400);
    eq(t.take(), [{ event: 'removed', ms: 150 }]);
  });
  check('convergence: a removed pod that never serves again converged in 0 ms', () => {
    const t = newConvergenceTracker({ quietMs: 1000 });
    t.podsReady(['a', 'b'], 0);
    t.podsReady(['a'], 100);
    t.tick(1100);
    eq(t.take(), [{ event: 'removed', ms: 0 }]);
  });
  check('convergence: an added pod never seen is unconverged, not a number', () => {
    const t = newConvergenceTracker({ giveUpMs: 1000 });
    t.podsReady([], 0);
    t.podsReady(['n'], 100);
    t.tick(1200);
    eq([t.take(), t.unconverged], [[], 1]);
  });
  check('convergence: a pod added and removed without ever answering is unconverged, not removed in 0 ms', () => {
    const t = newConvergenceTracker({ quietMs: 1000, giveUpMs: 60000 });
    t.podsReady(['a'], 0);
    t.podsReady(['a', 'n'], 100);
    t.seen('a', 150);
    t.podsReady(['a'], 200);
    t.tick(5000);
    eq([t.take(), t.unconverged], [[], 1]);
  });
  check('convergence: finish() counts what is still pending', () => {
    const t = newConvergenceTracker({ quietMs: 1000 });
    t.podsReady(['a', 'b'], 0);
    t.podsReady(['a', 'c'], 100);
    t.seen('b', 150);
    t.finish(500);
    eq([t.take(), t.unconverged], [[], 2]);
  });
  check('convergence: empty pod names from responses without the header are ignored', () => {
    const t = newConvergenceTracker();
    t.podsReady([], 0);
    t.seen(undefined, 5);
    t.seen('', 6);
    eq(t.lastSeen.size, 0);
  });
}

// fakeData: the handleSummary data shape k6 passes (only the keys the summary reads).
function fakeData(over) {
  const metrics = {};
  const counter = (n) => ({ type: 'counter', values: { count: n, rate: n / 10 } });
  const trend = (v) => ({ type: 'trend', values: v });
  metrics['http_reqs{role:load}'] = counter(10000);
  // k6 tags dropped_iterations with `scenario` only (never role): the summary reads the plain metric.
  metrics.dropped_iterations = counter(0);
  metrics['data_received{role:load}'] = counter(2048000);
  metrics['http_req_duration{role:load}'] = trend({
    count: 10000, min: 0.2, avg: 1.1, max: 30.2, 'p(50)': 0.9, 'p(90)': 1.5, 'p(99)': 4, 'p(99.9)': 9,
    'p(99.99)': 20, 'p(99.999)': 28, 'p(99.9999)': 30.0004,
  });
  for (const c of ERROR_CLASSES) metrics[`bench_errors{role:load,class:${c}}`] = counter(c === 'http_5xx' ? 7 : 0);
  metrics['bench_errors{role:load,class:http_5xx,cause:status}'] = counter(7);
  metrics['bench_endpoint_convergence{event:added}'] = trend({ count: 3, max: 1500, 'p(50)': 800 });
  metrics['bench_endpoint_convergence{event:removed}'] = trend({ count: 0, max: 0, 'p(50)': 0 });
  metrics.bench_scale_events = counter(6);
  Object.assign(metrics, over || {});
  return { metrics, state: { testRunDurationMs: 11000 } };
}

function fakeReport(extra) {
  const cfg = loadConfig({ BENCH_RATE: '1000', BENCH_DURATION: '10s', BENCH_TARGET_URL: 'https://bench.local' });
  return Object.assign({
    scenario: 'dynamic', cfg, targetUrl: cfg.targetUrl, path: '/', keepalive: true, rateTarget: 1000,
    durationMs: 10000, churnPattern: '5:12s,7:10s', parts: [],
  }, extra || {});
}

function summaryTests() {
  check('summary: bench.summary/v1 shape and numbers', () => {
    const s = buildSummary(fakeData(), fakeReport(), { testid: 'run-1', controller: 'traefik' });
    eq(Object.keys(s), ['schema', 'testid', 'scenario', 'controller', 'settings', 'requests', 'latency_ms', 'errors',
      'error_causes', 'convergence_ms', 'scale_events', 'by_path', 'throughput', 'runner'], 'keys');
    eq([s.schema, s.testid, s.scenario, s.controller], [SCHEMA, 'run-1', 'dynamic', 'traefik']);
    eq(s.settings, { target_url: 'https://bench.local', path: '/', rate: 1000, duration_s: 10, warmup_s: 0, connections: 100,
      timeout_s: 2, keepalive: true, tls: true, churn_pattern: '5:12s,7:10s', runner_share: 1,
      replays: 'counted_as_read_errors', environment: {}, k6_version: s.settings.k6_version });
    // the runner's own k6 release, as Go recorded it in the binary (test_runner.py: the pinned one)
    eq(/^v\d+\.\d+\.\d+$/.test(s.settings.k6_version), true, `k6_version ${s.settings.k6_version}`);
    eq([s.error_causes.http_5xx, s.error_causes.read], [{ status: 7 }, { other: 0, reset: 0, eof: 0, replayed: 0 }],
      'causes read from their own sub-metrics');
    eq(s.requests, { total: 10000, rate_target: 1000, rate_achieved: 1000, dropped_iterations: 0, dropped_because: null });
    eq(s.latency_ms, { min: 0.2, avg: 1.1, max: 30.2, p50: 0.9, p90: 1.5, p99: 4, 'p99.9': 9, 'p99.99': 20,
      'p99.999': 28, 'p99.9999': 30 });
    eq(s.errors, { connection: 0, timeout: 0, read: 0, http_5xx: 7, http_4xx: 0, other: 0 });
    eq(s.convergence_ms, { added: { count: 3, p50: 800, max: 1500 }, removed: { count: 0, p50: null, max: null } });
    eq([s.scale_events, s.by_path, s.throughput.bytes_received], [6, {}, 2048000]);
  });
  check('summary: dataplane-scale, a step per gauge in order, its Ready time and probes, the levels reached', () => {
    const gauge = (v) => ({ type: 'gauge', values: { value: v } });
    const one = (v) => ({ type: 'trend', values: { count: 1, 'p(50)': v, max: v } });
    const s = buildSummary(fakeData({
      'bench_dataplane_replicas{state:start}': gauge(1),
      'bench_dataplane_step{step:1}': gauge(3), 'bench_dataplane_ready{step:1}': one(2500),
      'bench_dataplane_probe_failures{step:1}': { type: 'counter', values: { count: 0 } },
      'bench_dataplane_step{step:2}': gauge(1),
      'bench_dataplane_probe_failures{step:2}': { type: 'counter', values: { count: 4 } },
      'bench_dataplane_step{step:3}': gauge(0), // no sample: no step 3
      bench_dataplane_ready: { type: 'trend', values: { count: 1, 'p(50)': 2500, max: 2500 } },
    }), fakeReport({ dataplaneScale: { namespace: 'ns', deployment: 'dp', levels: [3, 1], mode: 'abrupt' } }), {});
    const d = s.dataplane_scale;
    eq(d.steps, [{ step: 1, from: 1, to: 3, ready_ms: 2500, probe_failures: 0 },
      { step: 2, from: 3, to: 1, ready_ms: null, probe_failures: 4 }]);
    eq([d.start_replicas, d.levels_reached, d.unready, d.ready_ms, d.requests_lost, d.gate],
      [1, [3], 1, { count: 1, p50: 2500, max: 2500 }, 7, { max_errors: 0, passed: false }]);
    const text = formatText(s);
    if (!/Data-plane scale: Deployment ns\/dp, abrupt through 3,1/.test(text) || !/\n2 +3 -> 1 +not Ready +4\n/.test(text)) {
      throw new Error(text);
    }
    eq(d.scaled, null, 'no scaled object in the report: null');
    const via = buildSummary(fakeData({}), fakeReport({ dataplaneScale: { namespace: 'ns', deployment: 'dp', levels: [3, 1], mode: 'abrupt',
      scaled: 'NginxProxy ns/p spec.kubernetes.deployment.replicas' } }), {});
    eq(via.dataplane_scale.scaled, 'NginxProxy ns/p spec.kubernetes.deployment.replicas');
    if (!/Data-plane scale: Deployment ns\/dp through NginxProxy ns\/p spec\.kubernetes\.deployment\.replicas, abrupt/.test(formatText(via))) {
      throw new Error(formatText(via));
    }
    if (!warnings(s).some((w) => /1 data-plane scale step\(s\) were not Ready in time/.test(w))) throw new Error(warnings(s).join('; '));
  });
  check('summary: controller-upgrade, a step per pod number, what changed from setup, the rollout time', () => {
    const one = (v) => ({ type: 'trend', values: { count: 1, 'p(50)': v, max: v } });
    const counter = (n) => ({ type: 'counter', values: { count: n } });
    const data = fakeData({
      'bench_upgrade_pod{event:ready,pod:1}': one(1200), 'bench_upgrade_pod{event:terminating,pod:1}': one(1450),
      'bench_upgrade_pod{event:ready,pod:2}': one(2600),
      'bench_upgrade_pod{event:terminating,pod:3}': { type: 'trend', values: { count: 0, 'p(50)': 0, max: 0 } },
      bench_upgrade_rollout: one(3100.04),
      'bench_scale_events{action:controller_rollout}': counter(1),
      'bench_scale_events{action:controller_pod_terminating}': counter(1),
      'bench_scale_events{action:controller_pod_ready}': counter(2),
    });
    data.setup_data = { controllerUpgrade: { image_from: 'traefik:v1' } };
    const s = buildSummary(data, fakeReport({ controllerUpgrade: { kind: 'Deployment', namespace: 'ctl', name: 'traefik',
      container: 'traefik', imageTo: 'traefik:v2' } }), {});
    const u = s.controller_upgrade;
    eq(u.steps, [{ step: 1, old_terminating_ms: 1450, new_ready_ms: 1200 }, { step: 2, old_terminating_ms: null, new_ready_ms: 2600 }]);
    eq([u.image_from, u.image_to, u.annotation, u.at_end, u.rollouts, u.incomplete, u.rollout_ms, u.pods_terminating,
      u.pods_ready, u.requests_lost, u.gate], ['traefik:v1', 'traefik:v2', ROLLED_AT, 'image_restored', 1, 0, 3100, 1, 2, 7,
      { max_errors: 0, passed: false }]);
    const text = formatText(s);
    if (!/Controller upgrade: Deployment ctl\/traefik, container traefik image traefik:v1 -> traefik:v2/.test(text)
      || !/\n2 +- +2600\n/.test(text) || !/complete after 3100 ms/.test(text)) throw new Error(text);
    if (!warnings(s).some((w) => /controller-upgrade FAILED: 7 requests lost/.test(w))) throw new Error(warnings(s).join('; '));
    const restart = buildSummary(fakeData(), fakeReport({ controllerUpgrade: { kind: 'DaemonSet', namespace: 'ctl',
      name: 'ds', container: null, imageTo: null } }), {}).controller_upgrade;
    eq([restart.image_from, restart.at_end, restart.rollouts, restart.rollout_ms, restart.steps], [null, 'left_rolled', 0, null, []]);
    const t = summaryThresholds(fakeReport({ controllerUpgrade: {} }), {});
    eq(['bench_upgrade_pod{event:terminating,pod:50}', 'bench_scale_events{action:controller_pod_ready}'].every((k) => k in t), true);
  });
  check('summary: backend-failover, its flaps, the 503 time per flap, the gate against the budget', () => {
    const counter = (n) => ({ type: 'counter', values: { count: n } });
    const trend = (n, p50, max) => ({ type: 'trend', values: { count: n, 'p(50)': p50, max } });
    const data = fakeData({
      'bench_scale_events{action:backend_unhealthy}': counter(3), 'bench_scale_events{action:backend_healthy}': counter(2),
      'bench_failover_flap{measure:unhealthy}': trend(2, 2990, 3010),
    });
    const bf = { mode: 'errors', unhealthyMs: 3000, healthyMs: 4000, perFlap: 5, maxErrors: 20 };
    const s = buildSummary(data, fakeReport({ backendFailover: bf }), {});
    eq(s.backend_failover, { mode: 'errors', unhealthy_ms_set: 3000, healthy_ms_set: 4000, flaps: 3, recovered: 2,
      unhealthy_ms: { count: 2, p50: 2990, max: 3010 }, not_ready_ms: { count: 0, p50: null, max: null },
      requests_lost: 7, errors_per_flap: 2.3, gate: { max_errors: 20, errors_per_flap: 5, passed: true } });
    const text = formatText(s);
    if (!/Backend failover: one backend pod flapping \(errors\), unhealthy 3 s then healthy 4 s/.test(text)
      || !/requests lost 7 \(2\.30 per flap\) +gate \(at most 20\): passed/.test(text)) throw new Error(text);
    const strict = buildSummary(data, fakeReport({ backendFailover: Object.assign({}, bf, { mode: 'readiness', maxErrors: 0 }) }), {});
    eq(strict.backend_failover.gate, { max_errors: 0, errors_per_flap: 5, passed: false });
    if (!warnings(strict).some((w) => /^backend-failover FAILED: 7 requests lost over 3 flap\(s\)/.test(w))) {
      throw new Error(warnings(strict).join('; '));
    }
    const closed = formatText(buildSummary(data, fakeReport({ backendFailover: Object.assign({}, bf, { mode: 'close' }) }), {}));
    if (!/flapping \(close\)/.test(closed) || !/closing connections unanswered \(per flap\) +2 +2990 /.test(closed)) {
      throw new Error(closed);
    }
    const none = buildSummary(fakeData(), fakeReport({ backendFailover: bf }), {});
    if (!warnings(none).some((w) => /never turned unhealthy/.test(w))) throw new Error(warnings(none).join('; '));
    const t = summaryThresholds(fakeReport({ backendFailover: bf }), {});
    eq(['bench_scale_events{action:backend_unhealthy}', 'bench_failover_flap{measure:not_ready}'].map((k) => k in t), [true, true]);
  });
  check('summary: testid falls back to BENCH_TESTID, controller to null', () => {
    const s = buildSummary(fakeData(), fakeReport(), {});
    eq([s.testid, s.controller], ['local', null]);
  });
  check('summary: zero requests gives null latencies, not zeros', () => {
    const s = buildSummary(fakeData({ 'http_reqs{role:load}': { values: { count: 0 } },
      'http_req_duration{role:load}': { values: { count: 0, min: 0, max: 0 } } }), fakeReport(), {});
    eq([s.requests.total, s.latency_ms.p50, s.latency_ms.max], [0, null, null]);
    if (!warnings(s).some((w) => /no request completed/.test(w))) throw new Error('no warning for zero requests');
  });
  check('summary: by_path from parts', () => {
    const over = {
      'http_reqs{scenario:pod_4k}': { values: { count: 500 } },
      'dropped_iterations{scenario:pod_4k}': { values: { count: 2 } },
      'http_req_duration{scenario:pod_4k}': { values: { count: 500, min: 1, avg: 2, max: 3, 'p(50)': 2 } },
      'bench_errors{scenario:pod_4k,class:timeout}': { values: { count: 4 } },
    };
    const s = buildSummary(fakeData(over), fakeReport({ parts: [{ name: 'pod-4k', scenario: 'pod_4k', rateTarget: 100,
      durationMs: 5000 }] }), {});
    eq(s.by_path['pod-4k'].requests, { total: 500, rate_target: 100, rate_achieved: 100, dropped_iterations: 2 });
    eq([s.by_path['pod-4k'].latency_ms.p50, s.by_path['pod-4k'].errors.timeout, s.by_path['pod-4k'].errors.read], [2, 4, 0]);
  });
  check('summary: thresholds name every sub-metric the summary reads', () => {
    const t = summaryThresholds(fakeReport({ parts: [{ name: 'x', scenario: 'sx' }] }), { dropped_iterations: ['count==0'] });
    for (const key of ['http_reqs{role:load}', 'http_req_duration{role:load}', 'dropped_iterations{scenario:sx}',
      'bench_errors{role:load,class:other}', 'http_reqs{scenario:sx}', 'bench_errors{scenario:sx,class:read}',
      'bench_endpoint_convergence{event:added}', 'bench_scale_events']) {
      if (!t[key]) throw new Error(`missing ${key}`);
    }
    eq(t.dropped_iterations, ['count==0'], 'experiment threshold kept');
    if (t['dropped_iterations{role:load}']) throw new Error('dropped_iterations{role:load} never gets a sample');
  });
  check('summary: text table has the published percentiles and error classes', () => {
    const text = formatText(buildSummary(fakeData(), fakeReport(), { testid: 'run-1' }));
    for (const want of ['p99.9999', 'p99.999', 'connection', 'timeout', 'read', '5xx', 'achieved/s', 'dropped',
      'Endpoint convergence', 'scale events 6']) {
      if (text.indexOf(want) < 0) throw new Error(`table lacks "${want}"`);
    }
    if (!/\n\s*load\s+1000\s+1000\.0\s+10000\s+0\n/.test(text)) throw new Error(`request row wrong:\n${text}`);
  });
  check('summary: dropped iterations are shouted', () => {
    const s = buildSummary(fakeData({ dropped_iterations: { values: { count: 50 } } }), fakeReport(), {});
    eq(s.requests.dropped_iterations, 50);
    const text = formatText(s);
    if (!/!! WARNING: k6 DROPPED 50 iterations/.test(text)) throw new Error(text);
  });
  check('summary: dropped iterations say whose fault: the target when the runner had CPU, else the runner', () => {
    const s = buildSummary(fakeData({ dropped_iterations: { values: { count: 50 } } }), fakeReport(), {});
    s.runner = Object.assign({}, s.runner, { cpu_bound: false, runtime_bound: false, cpu_throttled: false });
    eq(droppedBecause(s), 'target');
    if (!/50 requests could not be sent on time, a finding about the target/.test(formatText(s))) throw new Error(formatText(s));
    s.runner.runtime_bound = true;
    eq(droppedBecause(s), 'runner');
    if (!/runner itself was short of CPU/.test(formatText(s))) throw new Error(formatText(s));
  });
  check('summary: the runner verdict reads the Go runtime (scheduling p99, GC share)', () => {
    const under = [SCHED_LIMIT_P99_MS * 0.5, GC_CPU_LIMIT * 0.5];
    eq([runtimeVerdict(under[0], under[1]), runtimeVerdict(SCHED_LIMIT_P99_MS + 0.5, under[1]),
      runtimeVerdict(under[0], GC_CPU_LIMIT + 0.01), runtimeVerdict(null, null)], [false, true, true, null]);
    const s = buildSummary(fakeData(), fakeReport(), {});
    eq(typeof s.runner.sched_latency_ms.p99, 'number', 'this k6 has k6/x/bench: its runtime figures are read');
    s.runner = Object.assign({}, s.runner, { runtime_bound: true, sched_latency_ms: { p99: 12 }, gc_cpu_fraction: 0.3 });
    if (!/k6 runner PAUSED ITSELF: ready goroutines waited up to 12 ms/.test(formatText(s))) throw new Error(formatText(s));
  });
  check('summary: the runner verdict reads its cgroup (throttled share of quota periods; unknown, not ok, unread)', () => {
    const read = { cgroup: 'v2 /sys/fs/cgroup', quota_cores: 0.25, periods: 100, throttled_periods: 60 };
    eq([throttleVerdict(Object.assign({}, read, { throttled_ratio: THROTTLED_LIMIT / 2 })),
      throttleVerdict(Object.assign({}, read, { throttled_ratio: 0.6 })),
      throttleVerdict({ cgroup: 'v1 /sys/fs/cgroup/cpu', quota_cores: null, throttled_ratio: 0 }),
      throttleVerdict({ cgroup: null, throttled_ratio: null, unknown_reason: 'no cpu.stat' }), throttleVerdict(undefined)],
    [false, true, false, null, null]);
    const s = buildSummary(fakeData({ dropped_iterations: { values: { count: 5 } } }), fakeReport(), {});
    eq(typeof s.runner.cgroup_cpu.seconds, 'number', 'this k6 has k6/x/bench: its cgroup figures are read');
    s.runner = Object.assign({}, s.runner, { cpu_bound: false, runtime_bound: false, cpu_throttled: true,
      cgroup_cpu: Object.assign({}, s.runner.cgroup_cpu, read, { throttled_ratio: 0.6, throttled_ms: 900, cpu_cores_used: 0.24 }) });
    eq(droppedBecause(s), 'runner');
    const text = formatText(s);
    if (!/k6 runner CPU-THROTTLED: its cgroup's CPU quota \(0.25 cores\) stopped it in 60.0% of the quota periods/.test(text)
      || !/throttled in 60 of 100 periods \(60.0%, limit 5%\): THROTTLED/.test(text)) throw new Error(text);
    s.runner.cpu_throttled = null;
    s.runner.cgroup_cpu = Object.assign({}, s.runner.cgroup_cpu, { cgroup: null, unknown_reason: 'no cgroup cpu.stat found' });
    if (!/runner CPU quota: unknown \(no cgroup cpu.stat found\)/.test(formatText(s))) throw new Error(formatText(s));
  });
  check('summary: outputs: stdout markers, summary.json and summary.txt in BENCH_SUMMARY_DIR', () => {
    const s = buildSummary(fakeData(), fakeReport(), {});
    const out = summaryOutputs(s, '/tmp/x');
    eq(Object.keys(out).sort(), ['/tmp/x/summary.json', '/tmp/x/summary.txt', 'stdout']);
    const m = /\nBENCH_SUMMARY_JSON_BEGIN\n(.*)\nBENCH_SUMMARY_JSON_END\n$/.exec(out.stdout);
    if (!m) throw new Error('no JSON between the markers');
    eq(JSON.parse(m[1]), JSON.parse(out['/tmp/x/summary.json']));
    eq(Object.keys(summaryOutputs(s, './')).sort(), ['./summary.json', './summary.txt', 'stdout']);
  });
  check('summary: a warm-up is a setting, its requests and drops are counted apart, the table says so', () => {
    const cfg = loadConfig({ BENCH_RATE: '1000', BENCH_DURATION: '10s', BENCH_WARMUP: '2s' });
    const report = fakeReport({ cfg });
    const t = summaryThresholds(report, {});
    for (const key of ['http_reqs{role:warmup}', 'dropped_iterations{scenario:warmup}']) {
      if (!t[key]) throw new Error(`missing ${key}`);
    }
    const s = buildSummary(fakeData({ dropped_iterations: { values: { count: 30 } },
      'dropped_iterations{scenario:warmup}': { values: { count: 25 } }, 'http_reqs{role:warmup}': { values: { count: 1975 } } }),
    report, {});
    eq([s.settings.warmup_s, s.requests.warmup_requests, s.requests.dropped_iterations, s.requests.total], [2, 1975, 5, 10000]);
    if (!/warm-up 2 s before it at the same rate: 1975 requests, left out of every figure/.test(formatText(s))) {
      throw new Error(formatText(s));
    }
    eq('warmup_requests' in buildSummary(fakeData(), fakeReport(), {}).requests, false, 'no warm-up, no count');
    eq(Object.keys(summaryThresholds(fakeReport(), {})).some((k) => /warmup/.test(k)), false, 'no warm-up, no sub-metric');
  });
  check('summary: table aligns columns', () => {
    eq(table(['a', 'bb'], [['xyz', '1'], ['q', '100']]), 'a     bb\nxyz    1\nq    100');
  });
}

function kubeTests() {
  check('kube: label selector matching', () => {
    const pod = { metadata: { labels: { a: 'b', c: 'd' } } };
    eq([matchesLabels(pod, { a: 'b' }), matchesLabels(pod, { a: 'x' }), matchesLabels({ metadata: {} }, { a: 'b' })],
      [true, false, false]);
  });
  check('kube: readiness from conditions, terminating pods are not Ready', () => {
    const ready = { metadata: {}, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    const notReady = { metadata: {}, status: { conditions: [{ type: 'Ready', status: 'False' }] } };
    const terminating = { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' }, status: ready.status };
    eq([isPodReady(ready), isPodReady(notReady), isPodReady(terminating), isPodReady({ metadata: {}, status: {} })],
      [true, false, false, false]);
  });
}

// A Deployment behind a fake client: get returns a copy, update stores one and counts it (the real
// API server with Go-map objects: ci/test/scenarios/test_churn.py).
function fakeBackend(replicas, templateAnnotations) {
  const api = {
    updates: 0,
    obj: {
      metadata: { name: 'bench-backend', namespace: 'bench', annotations: { keep: 'me' } },
      spec: { replicas, template: { metadata: { annotations: Object.assign({}, templateAnnotations) } } },
    },
    get() { return JSON.parse(JSON.stringify(api.obj)); },
    update(o) { api.updates += 1; api.obj = JSON.parse(JSON.stringify(o)); },
  };
  return api;
}
const RESTORE_CFG = { namespace: 'bench', deployment: 'bench-backend', testid: 'run-1' };
const RESTARTED = 'kubectl.kubernetes.io/restartedAt';
const recordOf = (api) => JSON.parse(api.obj.metadata.annotations[RESTORE_ANNOTATION]);

function restoreTests() {
  check('restore: the first change records the starting replicas in the same update', () => {
    const api = fakeBackend(5, {});
    scaleDeployment(api, RESTORE_CFG, 7);
    eq([api.updates, api.obj.spec.replicas, recordOf(api).replicas, recordOf(api).set.replicas, recordOf(api).testid],
      [1, 7, 5, 7, 'run-1']);
  });
  check('restore: later changes keep the first record and note what they set', () => {
    const api = fakeBackend(5, {});
    scaleDeployment(api, RESTORE_CFG, 7);
    scaleDeployment(api, RESTORE_CFG, 3);
    eq([recordOf(api).replicas, recordOf(api).set.replicas], [5, 3]);
  });
  check('restore: puts replicas back and removes the record, other annotations stay', () => {
    const api = fakeBackend(5, {});
    scaleDeployment(api, RESTORE_CFG, 7);
    const done = restoreDeployment(api, RESTORE_CFG);
    eq([api.obj.spec.replicas, RESTORE_ANNOTATION in api.obj.metadata.annotations, api.obj.metadata.annotations.keep],
      [5, false, 'me']);
    if (!/replicas 7 -> 5/.test(done)) throw new Error(`restore said: ${done}`);
  });
  check('restore: a rolling restart gets the original pod template back (annotation removed)', () => {
    const api = fakeBackend(5, { 'checksum/config': 'abc' });
    restartDeployment(api, RESTORE_CFG, Date.UTC(2026, 0, 1));
    eq(api.obj.spec.template.metadata.annotations[RESTARTED], '2026-01-01T00:00:00.000Z');
    restoreDeployment(api, RESTORE_CFG);
    eq(api.obj.spec.template.metadata.annotations, { 'checksum/config': 'abc' });
  });
  check('restore: an earlier restartedAt is put back, not removed', () => {
    const api = fakeBackend(5, { [RESTARTED]: 'before' });
    restartDeployment(api, RESTORE_CFG, Date.UTC(2026, 0, 1));
    restoreDeployment(api, RESTORE_CFG);
    eq(api.obj.spec.template.metadata.annotations[RESTARTED], 'before');
  });
  check('restore: replicas someone else changed after the churn stay as they set them', () => {
    const api = fakeBackend(5, {});
    scaleDeployment(api, RESTORE_CFG, 7);
    api.obj.spec.replicas = 3; // e.g. helm upgrade --set backend.replicas=3 after a killed run
    const done = restoreDeployment(api, RESTORE_CFG);
    eq([api.obj.spec.replicas, RESTORE_ANNOTATION in api.obj.metadata.annotations], [3, false]);
    if (!/left at 3/.test(done)) throw new Error(`restore said: ${done}`);
  });
  check('restore: no record, no update', () => {
    const api = fakeBackend(5, {});
    eq([restoreDeployment(api, RESTORE_CFG), api.updates], [null, 0]);
  });
  check('restore: a change that changes nothing writes no record', () => {
    const api = fakeBackend(5, {});
    eq([scaleDeployment(api, RESTORE_CFG, 5), api.updates], [false, 0]);
  });
  check('restore: a foreign annotation value is refused, naming the annotation', () => {
    const api = fakeBackend(5, {});
    api.obj.metadata.annotations[RESTORE_ANNOTATION] = 'not json';
    throwsWith(() => restoreDeployment(api, RESTORE_CFG), /bench\/churn-restore .* is not a bench restore record/);
  });
  check('restore: a parameters object (NginxProxy) scaled at its own field, recorded and put back there', () => {
    const api = fakeBackend(5, {});
    api.obj = { kind: 'NginxProxy', metadata: { name: 'p', namespace: 'ngf', annotations: { keep: 'me' } },
      spec: { logging: { errorLevel: 'info' }, kubernetes: { deployment: { replicas: 1, container: { image: {} } } } } };
    const cfg = Object.assign({}, RESTORE_CFG, { kind: 'NginxProxy.gateway.nginx.org', deployment: 'p', namespace: 'ngf',
      replicas: 'spec.kubernetes.deployment.replicas' });
    scaleDeployment(api, cfg, 3);
    eq([api.obj.spec.kubernetes.deployment, recordOf(api).replicas, recordOf(api).set.replicas, api.obj.spec.replicas],
      [{ replicas: 3, container: { image: {} } }, 1, 3, undefined]);
    const done = restoreDeployment(api, cfg);
    eq([api.obj.spec, RESTORE_ANNOTATION in api.obj.metadata.annotations],
      [{ logging: { errorLevel: 'info' }, kubernetes: { deployment: { replicas: 1, container: { image: {} } } } }, false]);
    if (!/replicas 3 -> 1/.test(done)) throw new Error(`restore said: ${done}`);
  });
  check('restore: a parameters object without the field gets it for the scale and loses it again', () => {
    const api = fakeBackend(5, {});
    api.obj = { kind: 'NginxProxy', metadata: { name: 'p', namespace: 'ngf' }, spec: {} };
    const cfg = Object.assign({}, RESTORE_CFG, { kind: 'NginxProxy.gateway.nginx.org', replicas: 'spec.kubernetes.deployment.replicas' });
    scaleDeployment(api, cfg, 2);
    eq([api.obj.spec, recordOf(api).replicas], [{ kubernetes: { deployment: { replicas: 2 } } }, null]);
    restoreDeployment(api, cfg);
    eq(api.obj.spec, { kubernetes: { deployment: {} } });
  });
}

function rolloutTests() {
  const dep = (generation, status) => ({ metadata: { generation }, spec: { replicas: 2 }, status });
  const pod = (name, terminating, ready) => ({ name, terminating, ready });
  check('rollout: each old pod terminating and each new pod Ready, in order, then complete', () => {
    const r = newRolloutTracker();
    r.started(['a', 'b'], 1000);
    r.pods([pod('a', false, true), pod('b', false, true), pod('c', false, false)], 1250);
    r.pods([pod('a', false, true), pod('b', false, true), pod('c', false, true)], 2000);
    r.pods([pod('a', true, false), pod('b', false, true), pod('c', false, true), pod('d', false, true)], 2500);
    r.workload(dep(3, { observedGeneration: 3, replicas: 2, updatedReplicas: 2, availableReplicas: 2 }), 2500);
    eq(r.ended(), null, 'b not yet terminating: not complete');
    r.pods([pod('c', false, true), pod('d', false, true)], 3000); // b gone between two polls
    r.workload(dep(3, { observedGeneration: 3, replicas: 2, updatedReplicas: 2, availableReplicas: 2 }), 3000);
    eq(r.ended(), true);
    eq(r.take(), [{ event: 'ready', n: 1, pod: 'c', ms: 1000 }, { event: 'terminating', n: 1, pod: 'a', ms: 1500 },
      { event: 'ready', n: 2, pod: 'd', ms: 1500 }, { event: 'terminating', n: 2, pod: 'b', ms: 2000 },
      { event: 'complete', ms: 2000 }]);
  });
  check('rollout: status complete only once the controller saw the generation, every replica updated and available', () => {
    const st = { observedGeneration: 3, replicas: 2, updatedReplicas: 2, availableReplicas: 2 };
    eq([rolledOut(dep(3, st)), rolledOut(dep(4, st)), rolledOut(dep(3, Object.assign({}, st, { replicas: 3 }))),
      rolledOut(dep(3, Object.assign({}, st, { availableReplicas: 1 })))], [true, false, false, false]);
    const ds = (status) => ({ metadata: { generation: 2 }, spec: {}, status: Object.assign({ observedGeneration: 2 }, status) });
    eq([rolledOut(ds({ desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3 }), 'DaemonSet'),
      rolledOut(ds({ desiredNumberScheduled: 3, updatedNumberScheduled: 2, numberAvailable: 3 }), 'DaemonSet')], [true, false]);
  });
  check('rollout: not complete within giveUpMs ends false', () => {
    const r = newRolloutTracker({ giveUpMs: 5000 });
    r.started(['a'], 0);
    r.tick(4999);
    eq(r.ended(), null);
    r.tick(5000);
    eq([r.ended(), r.incomplete, r.take()], [false, 1, []]);
  });
  check('rollout: the image goes to the one container, recorded with where it came from, and comes back', () => {
    const api = fakeBackend(2, {});
    api.obj.spec.template.spec = { containers: [{ name: 'proxy', image: 'p:1' }, { name: 'traefik', image: 't:1' }] };
    const u = { kind: 'Deployment', namespace: 'bench', name: 'bench-backend', container: 'traefik', image: 't:2' };
    rollWorkload(api, RESTORE_CFG, u, Date.UTC(2026, 0, 1));
    eq([api.obj.spec.template.spec.containers, api.obj.spec.template.metadata.annotations[ROLLED_AT], recordOf(api).image,
      recordOf(api).set], [[{ name: 'proxy', image: 'p:1' }, { name: 'traefik', image: 't:2' }], '2026-01-01T00:00:00.000Z',
      { container: 'traefik', from: 't:1' }, { image: 't:2' }]);
    const done = restoreDeployment(api, Object.assign({ settings: { BENCH_UPGRADE_FROM: 't:1' } }, RESTORE_CFG));
    eq([api.obj.spec.template.spec.containers[1].image, RESTORE_ANNOTATION in api.obj.metadata.annotations,
      api.obj.spec.template.metadata.annotations[ROLLED_AT]], ['t:1', false, '2026-01-01T00:00:00.000Z']);
    if (!/container traefik's image t:2 -> t:1/.test(done)) throw new Error(`restore said: ${done}`);
  });
  check('rollout: the image goes back to BENCH_UPGRADE_FROM, never to the from a record names, and stays without it', () => {
    const api = fakeBackend(2, {});
    api.obj.spec.template.spec = { containers: [{ name: 'traefik', image: 't:2' }] };
    // two from keys: JSON.parse keeps the last
    api.obj.metadata.annotations = { [RESTORE_ANNOTATION]: '{"image":{"container":"traefik","from":"t:1","from":"evil:1"},'
      + '"set":{"image":"t:2"}}' };
    const kept = restoreDeployment(api, RESTORE_CFG);
    eq(api.obj.spec.template.spec.containers[0].image, 't:2');
    if (!/no BENCH_UPGRADE_FROM/.test(kept)) throw new Error(`restore said: ${kept}`);
    api.obj.metadata.annotations = { [RESTORE_ANNOTATION]: '{"image":{"container":"traefik","from":"evil:1"},"set":{"image":"t:2"}}' };
    restoreDeployment(api, Object.assign({ settings: { BENCH_UPGRADE_FROM: 't:1' } }, RESTORE_CFG));
    eq(api.obj.spec.template.spec.containers[0].image, 't:1');
  });
  check('rollout: the annotation alone writes no record; an unknown container is refused, naming it', () => {
    const api = fakeBackend(2, {});
    api.obj.spec.template.spec = { containers: [{ name: 'traefik', image: 't:1' }] };
    rollWorkload(api, RESTORE_CFG, { kind: 'Deployment', namespace: 'bench', name: 'bench-backend', container: '', image: '' }, 0);
    eq([api.updates, RESTORE_ANNOTATION in api.obj.metadata.annotations], [1, false]);
    throwsWith(() => rollWorkload(api, RESTORE_CFG, { kind: 'Deployment', namespace: 'bench', name: 'bench-backend',
      container: 'nginx', image: 'n:2' }, 0), /^Deployment bench\/bench-backend has no container nginx \(BENCH_UPGRADE_CONTAINER\)$/);
  });
}

function kneeTests() {
  const budget = { p99Ms: 50, errorRatio: 0.001 };
  const noErrors = { connection: 0, timeout: 0, read: 0, http_5xx: 0, http_4xx: 0, other: 0 };
  const req = (total, achieved, dropped, share) => ({ total, rate_target: 100 * (share || 1), rate_achieved: achieved,
    dropped_iterations: dropped });
  check('knee: a step within every limit is ok', () => {
    eq(judgeStep(100, req(1000, 100, 0), { p99: 10 }, noErrors, budget),
      { rate_target: 100, rate_target_run: 100, rate_achieved: 100, p99_ms: 10, error_ratio: 0, dropped_iterations: 0,
        ok: true });
  });
  check('knee: one of two runners judges its own half of the step', () => {
    const j = judgeStep(100, req(500, 49.5, 0, 0.5), { p99: 10 }, noErrors, budget);
    eq([j.ok, j.rate_target, j.rate_target_run], [true, 50, 100]);
    eq(judgeStep(100, req(500, 45, 0, 0.5), { p99: 10 }, noErrors, budget).ok, false);
  });
  check('knee: each broken limit fails the step', () => {
    eq([
      judgeStep(100, req(1000, 100, 1), { p99: 10 }, noErrors, budget).ok,
      judgeStep(100, req(1000, 90, 0), { p99: 10 }, noErrors, budget).ok,
      judgeStep(100, req(1000, 100, 0), { p99: 51 }, noErrors, budget).ok,
      judgeStep(100, req(1000, 100, 0), { p99: 10 }, Object.assign({}, noErrors, { read: 2 }), budget).ok,
      judgeStep(100, req(0, 0, 0), { p99: null }, noErrors, budget).ok,
    ], [false, false, false, false, false]);
  });
  // each limit with data on it and just past it: a comparison turned strict or a limit moved fails here
  check('knee: the rate is held at 95 % of the target and not below', () => {
    eq([rateHeld({ rate_achieved: 95, rate_target: 100 }), rateHeld({ rate_achieved: 94.9, rate_target: 100 }),
      rateHeld({ rate_achieved: 97.9, rate_target: 100 })], [true, false, true]);
  });
  check('knee: p99 and the error ratio at the budget are within it, just over are not', () => {
    const withReads = (n) => Object.assign({}, noErrors, { read: n });
    eq([
      judgeStep(100, req(1000, 100, 0), { p99: 50 }, noErrors, budget).ok,
      judgeStep(100, req(1000, 100, 0), { p99: 50.01 }, noErrors, budget).ok,
      judgeStep(100, req(1000, 100, 0), { p99: 10 }, withReads(1), budget).ok,
      judgeStep(100, req(1000, 100, 0), { p99: 10 }, withReads(2), budget).ok,
    ], [true, false, true, false]);
  });
  check('knee: a calibrate step holds with no drop, the rate held and the lag within its limits', () => {
    const calm = { p95: LAG_LIMIT_MS, p99: LAG_LIMIT_P99_MS };
    eq([
      judgeRunnerStep(100, req(1000, 95, 0), { p99: 10 }, calm, lagCpuBound).ok,
      judgeRunnerStep(100, req(1000, 100, 1), { p99: 10 }, calm, lagCpuBound).ok,
      judgeRunnerStep(100, req(1000, 100, 0), { p99: 10 }, { p95: LAG_LIMIT_MS, p99: LAG_LIMIT_P99_MS + 0.1 },
        lagCpuBound).ok,
    ], [true, false, false]);
    eq([lagCpuBound(LAG_LIMIT_MS, LAG_LIMIT_P99_MS), lagCpuBound(LAG_LIMIT_MS + 0.1, 0), lagCpuBound(null, 1)],
      [false, true, null]);
  });
  check('knee: the first failed step above the knee says what limited the staircase', () => {
    const j = (rate, ok, cpu) => ({ rate_target: rate, ok, cpu_bound: cpu });
    eq([limitedBy([j(10, true, false), j(20, false, true)]), limitedBy([j(10, true, false), j(20, false, false)]),
      limitedBy([j(10, true, false)])], ['runner-cpu', 'connections-or-target', null]);
  });
  check('knee: highest ok step, null when none', () => {
    eq(kneeRate([{ rate_target: 10, ok: true }, { rate_target: 20, ok: true }, { rate_target: 30, ok: false }]), 20);
    eq(kneeRate([{ rate_target: 10, ok: false }]), null);
  });
}

function routeTests() {
  check('routes: config defaults and overrides', () => {
    const c = loadConfig({ BENCH_NAMESPACE: 'ns1' });
    eq(c.routes.kinds, ['httproute']);
    eq(c.gateway, { name: 'bench', namespace: 'ns1', listener: '' });
    eq(c.routes.backends, [{ name: 'bench-backend', port: 80 }, { name: 'bench-backend-headless', port: 8080 }]);
    eq(loadConfig({ BENCH_ROUTE_KIND: 'both' }).routes.kinds, ['httproute', 'ingress']);
    eq(loadConfig({}, { BENCH_ROUTE_COUNT: '1000' }).routes.count, 1000);
    eq(loadConfig({ BENCH_ROUTE_COUNT: '7' }, { BENCH_ROUTE_COUNT: '1000' }).routes.count, 7);
    eq(loadConfig({ BENCH_URL_GATEWAY: 'http://gw.example:8080/' }).pathUrls.gateway, 'http://gw.example:8080');
  });
  check('routes: bad values name the variable and what is allowed', () => {
    throwsWith(() => loadConfig({ BENCH_ROUTE_KIND: 'grpcroute' }), /invalid BENCH_ROUTE_KIND="grpcroute": expected httproute, ingress or both/);
    throwsWith(() => loadConfig({ BENCH_ROUTE_COUNT: '10001' }), /BENCH_ROUTE_COUNT="10001": expected a whole number from 1 to 10000/);
    throwsWith(() => loadConfig({ BENCH_ROUTE_INTERVAL: '0s' }), /BENCH_ROUTE_INTERVAL="0s"/);
    throwsWith(() => loadConfig({ BENCH_ROUTE_BACKENDS: 'svc' }), /BENCH_ROUTE_BACKENDS="svc": expected comma-separated service:port/);
    throwsWith(() => loadConfig({ BENCH_ROUTE_BACKENDS: 'svc:70000' }), /BENCH_ROUTE_BACKENDS/);
    throwsWith(() => loadConfig({ BENCH_ROUTE_DOMAIN: 'Routes.Example' }), /BENCH_ROUTE_DOMAIN/);
    throwsWith(() => loadConfig({ BENCH_GATEWAY_LISTENER: 'Web_1' }), /BENCH_GATEWAY_LISTENER="Web_1": expected empty or a DNS label/);
    throwsWith(() => loadConfig({ BENCH_URL_GATEWAY: 'gw:80' }), /BENCH_URL_GATEWAY/);
  });
  check('routes: an HTTPRoute and an Ingress for route 3, labelled with the run', () => {
    const c = loadConfig({ BENCH_NAMESPACE: 'ns1', BENCH_GATEWAY_NAMESPACE: 'gw-ns', BENCH_GATEWAY_LISTENER: 'web',
      BENCH_INGRESS_CLASS: 'traefik', BENCH_TESTID: 'run-1.' });
    const h = buildRoute(c, 'httproute', 3, { name: 'svc', port: 80 });
    eq(h.metadata, { name: 'bench-route-h-3', namespace: 'ns1', labels: { [ROUTE_LABEL]: 'run-1' } });
    eq(h.spec.parentRefs, [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'bench', namespace: 'gw-ns', sectionName: 'web' }]);
    eq(h.spec.hostnames, ['h-3.routes.bench.local']);
    eq(h.spec.rules[0].backendRefs, [{ group: '', kind: 'Service', name: 'svc', port: 80 }]);
    const i = buildRoute(c, 'ingress', 3, { name: 'svc', port: 80 });
    eq([i.metadata.name, i.spec.ingressClassName, i.spec.rules[0].host, i.spec.rules[0].http.paths[0].backend.service],
      ['bench-route-i-3', 'traefik', 'i-3.routes.bench.local', { name: 'svc', port: { number: 80 } }]);
    eq([routeHost(c, 'ingress', 12), runLabel(c)], ['i-12.routes.bench.local', 'run-1']);
  });
  check('routes: probe answers before the first 200, by bucket', () => {
    eq([200, 404, 503, 0, 302, 403, 502, 204].map(preReadyBucket),
      [null, '404', '503', 'no_response', '3xx', 'other_4xx', 'other_5xx', 'other']);
  });
}

// A script's own settings (experiment({settings})), as loadConfig validates them.
const SPIKE_SETTINGS = {
  BENCH_SPIKE_REPLICAS: { type: 'count', default: 10, max: 1000 },
  BENCH_SPIKE_HOLD: { type: 'duration', default: '20s' },
};

function scriptSettingTests() {
  check('script settings: defaults when unset or empty, the variable when set, texts for the summary', () => {
    const d = loadConfig({}, {}, SPIKE_SETTINGS);
    eq([d.settings, d.settingTexts], [{ BENCH_SPIKE_REPLICAS: 10, BENCH_SPIKE_HOLD: 20000 },
      { BENCH_SPIKE_REPLICAS: '10', BENCH_SPIKE_HOLD: '20s' }]);
    const s = loadConfig({ BENCH_SPIKE_REPLICAS: ' 12 ', BENCH_SPIKE_HOLD: '' }, {}, SPIKE_SETTINGS);
    eq([s.settings, s.settingTexts.BENCH_SPIKE_REPLICAS], [{ BENCH_SPIKE_REPLICAS: 12, BENCH_SPIKE_HOLD: 20000 }, '12']);
    eq([loadConfig({}).settings, loadConfig({}).settingTexts], [{}, {}], 'no declarations');
  });
  check('script settings: a declared name is not an unknown variable; an undeclared one still is', () => {
    eq(loadConfig({ BENCH_SPIKE_HOLD: '1s' }, {}, SPIKE_SETTINGS).settings.BENCH_SPIKE_HOLD, 1000);
    throwsWith(() => loadConfig({ BENCH_SPIKE_HOLD: '1s' }), /unknown variable BENCH_SPIKE_HOLD: allowed are BENCH_TARGET_URL/);
    throwsWith(() => loadConfig({ BENCH_SPIKE_HOLDS: '1s' }, {}, SPIKE_SETTINGS),
      /unknown variable BENCH_SPIKE_HOLDS: allowed are .*BENCH_SPIKE_REPLICAS, BENCH_SPIKE_HOLD$/);
  });
  check('script settings: a bad value names the variable, the value and what is allowed', () => {
    throwsWith(() => loadConfig({ BENCH_SPIKE_REPLICAS: '1001' }, {}, SPIKE_SETTINGS),
      /^invalid BENCH_SPIKE_REPLICAS="1001": expected a whole number from 1 to 1000$/);
    throwsWith(() => loadConfig({ BENCH_SPIKE_HOLD: '20x' }, {}, SPIKE_SETTINGS),
      /^invalid BENCH_SPIKE_HOLD="20x": expected a positive duration/);
  });
  check('script settings: bad declarations are refused at init with what to do', () => {
    throwsWith(() => loadConfig({}, {}, { SPIKE: { type: 'count', default: 1 } }), /setting SPIKE: a setting's name is BENCH_/);
    throwsWith(() => loadConfig({}, {}, { BENCH_RATE: { type: 'count', default: 1 } }),
      /BENCH_RATE is one of bench's own variables; give the script a default for it with experiment\(\{defaults\}\)/);
    throwsWith(() => loadConfig({}, {}, { BENCH_X: { type: 'number', default: 1 } }), /type "number"; expected one of count, duration/);
    throwsWith(() => loadConfig({}, {}, { BENCH_X: { type: 'duration' } }), /BENCH_X: no default/);
    throwsWith(() => loadConfig({}, {}, { BENCH_X: { type: 'duration', default: 'soon' } }),
      /BENCH_X: its default is refused: invalid BENCH_X="soon"/);
    throwsWith(() => loadConfig({}, { BENCH_PATHS: '/x' }), /the script's default for BENCH_PATHS: not one of bench's variables/);
  });
  check('parsers: lib/parse.js gives entry scripts the parsers config.js uses, duration from its own module', () => {
    eq([parse.parseDuration === durationAlone, parse.parseDuration === parseDuration, parse.parseBool === parseBool],
      [true, true, true], 'one function each, wherever it is imported from');
    eq([parse.parseDuration('X', '1m30s'), parse.parsePositiveInt('X', '7', 10), parse.parsePath('X', '/bytes/4k')],
      [90000, 7, '/bytes/4k']);
    throwsWith(() => parse.parseDuration('BENCH_SPIKE_HOLD', '-1s'), /^invalid BENCH_SPIKE_HOLD="-1s": expected a positive/);
  });
  check('summary: the script\'s settings in settings.script and a text line, none without declarations', () => {
    const cfg = loadConfig({ BENCH_SPIKE_HOLD: '2s' }, {}, SPIKE_SETTINGS);
    const s = buildSummary(fakeData(), fakeReport({ cfg }), {});
    eq(s.settings.script, { BENCH_SPIKE_REPLICAS: '10', BENCH_SPIKE_HOLD: '2s' });
    if (!/\nscript settings   BENCH_SPIKE_REPLICAS=10   BENCH_SPIKE_HOLD=2s\n/.test(formatText(s))) {
      throw new Error(`no script settings line in:\n${formatText(s)}`);
    }
    eq('script' in buildSummary(fakeData(), fakeReport(), {}).settings, false);
  });
}

// fakeChurn(endAt): a churn context (churn-context.js) on a fake clock: waitUntil moves the clock,
// changes are recorded as [at, action, replicas].
// fakeChurn(endAt, settings, recoverAfter): a churn context on a fake clock; a deleted controller
// pod recovers recoverAfter ms after its delete (never when undefined).
function fakeChurn(endAt, settings, recoverAfter) {
  const log = [];
  let now = 0;
  let recoversAt = null;
  const recovering = () => recoversAt !== null && now < recoversAt;
  const t = newChurnContext({
    cfg: { settings: settings || {} },
    endAt,
    now: () => now,
    waitUntil(until, done) {
      if (done && recoversAt !== null && recoversAt < until && !done()) now = Math.max(now, recoversAt);
      else if (!(done && done())) now = Math.max(now, until);
    },
    controllerPods: () => ['ctl-a', 'ctl-b'],
    recovering,
    dataplaneReplicas: () => 1,
    dataplaneReady: () => !recovering(),
    mark(action, what) {
      log.push([now, action, what]);
    },
    change(action, replicas) {
      log.push(replicas === undefined ? [now, action] : [now, action, replicas]);
      if (action === 'controller_podkill' || action === 'dataplane_scale') recoversAt = recoverAfter === undefined ? Infinity : now + recoverAfter;
      return true;
    },
  });
  return { t, log, now: () => now };
}

// runFake(script, endAt): script(null, t) as churn.js runs it: CHURN_OVER ends it quietly.
function runFake(script, endAt, settings, recoverAfter) {
  const f = fakeChurn(endAt, settings, recoverAfter);
  try {
    script(null, f.t);
  } catch (e) {
    if (!isChurnOver(e)) throw e;
    f.over = true;
  }
  return f;
}

function experimentTests() {
  check('experiment: a definition that cannot work is refused before anything is built, saying what to do', () => {
    throwsWith(() => steadyExperiment({ name: 'x', churn: () => {} }),
      /^experiment x: a churn needs experiment\(\) from lib\/churn-experiment\.js/);
    throwsWith(() => churnExperiment({ name: 'x' }), /^experiment x: churn must be a function \(k8s, t\) => \{ \.\.\. \}; /);
    throwsWith(() => steadyExperiment({}), /^experiment\(\{name, \.\.\.\}\): the experiment needs a name$/);
  });
  check('experiment: a warm-up is a scenario of its own before the measured load, handing its VUs on', () => {
    const cfg = loadConfig({ BENCH_RATE: '100', BENCH_DURATION: '10s', BENCH_WARMUP: '3s' });
    const s = measuredLoad(cfg, 'load');
    eq(Object.keys(s), ['warmup', 'load']);
    eq([s.warmup.executor, s.warmup.rate, s.warmup.duration, s.warmup.startTime, s.warmup.gracefulStop, s.warmup.tags],
      [s.load.executor, 100, '3000ms', '0ms', '0s', { role: 'warmup' }]);
    eq([s.load.startTime, s.load.duration, s.load.preAllocatedVUs, s.load.tags.role], ['3000ms', '10000ms', s.warmup.preAllocatedVUs, 'load']);
    eq(noDroppedIterations(cfg), { 'dropped_iterations{scenario:load}': ['count==0'] });
    const options = baseOptions({ scenario: 'static', cfg }, s, {});
    eq(options.scenarios.runner_lag.duration, '13000ms', 'the lag is sampled over warm-up and load');
    const none = loadConfig({ BENCH_RATE: '100', BENCH_DURATION: '10s' });
    eq([Object.keys(measuredLoad(none, 'load')), measuredLoad(none, 'load').load.startTime, noDroppedIterations(none)],
      [['load'], '0ms', { dropped_iterations: ['count==0'] }]);
  });
  check('experiment: an experiment that builds no warm-up refuses one, naming BENCH_WARMUP', () => {
    const cfg = loadConfig({ BENCH_RATE: '100', BENCH_DURATION: '10s', BENCH_WARMUP: '3s' });
    throwsWith(() => baseOptions({ scenario: 'max-rps', cfg }, staircase(cfg, 10, 'load').scenarios, {}),
      /^invalid BENCH_WARMUP="3s": max-rps takes no warm-up .*leave BENCH_WARMUP empty or 0s/);
  });
}

function failoverTests() {
  check('failover: a flap is the first 503 to the next good answer; the first answer only sets the state', () => {
    const f = newFailoverTracker();
    eq(f.answered(503, 0), null, 'unhealthy when first seen: its start was before the run');
    eq(f.answered(200, 500), 'backend_healthy', 'its end is seen');
    eq(f.take(), [], 'but it has no duration');
    eq(f.answered(200, 600), null);
    eq(f.answered(0, 700), null, 'no answer: neither');
    eq(f.answered(503, 1000), 'backend_unhealthy');
    f.podReady(true, 1200);
    f.podReady(false, 3000);
    f.podReady(false, 3500);
    eq(f.answered(503, 4000), null);
    eq(f.answered(404, 6000), 'backend_healthy', 'a 404 is an answer of a healthy nginx');
    eq(f.take(), [], 'taken when the next flap begins: the kubelet may take it out after the flag is gone');
    eq(f.answered(503, 9000), 'backend_unhealthy');
    eq(f.answered(200, 11000), 'backend_healthy');
    f.podReady(false, 12500);
    eq(f.take(), [{ unhealthy_ms: 5000, not_ready_ms: 2000 }]);
    eq(f.answered(503, 14000), 'backend_unhealthy');
    f.finish();
    eq(f.take(), [{ unhealthy_ms: 2000, not_ready_ms: 3500 }], 'the flap still open at the end has no record');
    eq(f.flaps, 3);
    eq(FAILOVER_ACTIONS, ['backend_unhealthy', 'backend_healthy']);
  });
  check('failover: in close mode a flap is the first request closed unanswered (class read) to the next answer', () => {
    const f = newFailoverTracker('close');
    eq(f.answered(200, 0), null);
    eq(f.answered(503, 500), null, 'a 503 is not close mode\'s failure: neither');
    eq(f.answered(0, 700, 'timeout'), null, 'a timeout: neither');
    eq(f.answered(0, 800, 'connection'), null, 'a refused dial: neither');
    eq(f.answered(0, 1000, 'read'), 'backend_unhealthy');
    eq(f.answered(0, 1100, 'read'), null);
    eq(f.answered(200, 3000), 'backend_healthy');
    f.finish();
    eq(f.take(), [{ unhealthy_ms: 2000, not_ready_ms: null }]);
    eq([unhealthyAnswer('errors', 0, 'read'), unhealthyAnswer('readiness', 503, null), unhealthyAnswer('close', 0, 'read')],
      [false, true, true]);
    throwsWith(() => newFailoverTracker('reset'), /^backend-failover mode "reset": expected one of errors, readiness, close$/);
  });
  check('failover: the polled path, the windows a run can overlap, and the gate per mode', () => {
    eq([pollPath('errors', '/bytes/1k'), pollPath('readiness', '/bytes/1k'), pollPath('close', '/bytes/1k')],
      ['/bytes/1k', '/healthz', '/bytes/1k']);
    throwsWith(() => pollPath('timeouts', '/'), /^backend-failover mode "timeouts": expected one of errors, readiness, close$/);
    eq(flapWindows(60000, 5000, 10000), 5, '65 s of schedule time: 4 whole periods and a part');
    eq(flapWindows(25000, 3000, 4000), 4);
    eq([gateMaxErrors('readiness', 5, 4), gateMaxErrors('errors', 5, 4), gateMaxErrors('close', 5, 4)], [0, 20, 20]);
    const settings = { BENCH_FAILOVER_MODE: 'errors', BENCH_FAILOVER_UNHEALTHY: 1000, BENCH_FAILOVER_HEALTHY: 2000,
      BENCH_FAILOVER_ERRORS_PER_FLAP: 5 };
    eq(runBudget({ durationMs: 10000, settings }), 20, 'the run\'s: 4 windows in 11 s of a 3 s period');
  });
  check('failover: t.mark records an event the churn saw, and refuses another action', () => {
    const f = fakeChurn(10000);
    f.t.mark('backend_unhealthy', 'pod p');
    f.t.mark('backend_healthy');
    eq(f.log, [[0, 'backend_unhealthy', 'pod p'], [0, 'backend_healthy', '']]);
    throwsWith(() => f.t.mark('scale', 3), /^t\.mark\("scale"\): expected one of backend_unhealthy, backend_healthy$/);
  });
}

function dataplaneTests() {
  const dep = (replicas, status, generation) => ({ metadata: { generation: generation || 2 }, spec: { replicas }, status });
  check('dataplane: a step is Ready once the controller saw it and exactly that many replicas are Ready', () => {
    const d = newDataplaneTracker();
    eq(d.scaled(1, 3, 1000), 1);
    d.deployment(dep(3, { observedGeneration: 1, replicas: 1, readyReplicas: 1 }), 1200);
    d.probed(false, 1300);
    d.deployment(dep(3, { observedGeneration: 2, replicas: 3, readyReplicas: 2 }), 2000);
    eq(d.ready(), false, 'two of three Ready');
    d.deployment(dep(3, { observedGeneration: 2, replicas: 3, readyReplicas: 3 }), 4500);
    d.probed(false, 5000); // after Ready, still this step's until the next
    eq([d.ready(), d.take()], [true, []]);
    eq(d.scaled(3, 1, 6000), 2);
    d.deployment(dep(1, { observedGeneration: 3, replicas: 3, readyReplicas: 1 }, 3), 6250);
    eq(d.ready(), false, 'scaling down: the removed pods still count in status.replicas');
    d.deployment(dep(1, { observedGeneration: 3, replicas: 1, readyReplicas: 1 }, 3), 7000);
    d.finish();
    eq(d.take(), [{ step: 1, from: 1, to: 3, ready_ms: 3500, probe_failures: 2 },
      { step: 2, from: 3, to: 1, ready_ms: 1000, probe_failures: 0 }]);
  });
  check('dataplane: through a parameters object the Deployment asks for the step later; its generation then counts', () => {
    const d = newDataplaneTracker();
    d.scaled(1, 2, 1000);
    // the NginxProxy changed, NGF has not copied it yet: the old spec is Ready and fully observed
    d.deployment(dep(1, { observedGeneration: 2, replicas: 1, readyReplicas: 1 }, 2), 1250);
    eq(d.ready(), false, 'the Deployment does not ask for 2 yet');
    d.deployment(dep(2, { observedGeneration: 2, replicas: 2, readyReplicas: 2 }, 3), 1500);
    eq(d.ready(), false, 'generation 3 not observed yet');
    d.deployment(dep(2, { observedGeneration: 3, replicas: 2, readyReplicas: 2 }, 3), 2500);
    d.finish();
    eq(d.take(), [{ step: 1, from: 1, to: 2, ready_ms: 1500, probe_failures: 0 }]);
  });
  check('dataplane: the summary names the Deployment, or the parameters object and its field', () => {
    const cfg = (settings) => ({ namespace: 'bench', settings: Object.assign({ BENCH_DATAPLANE_NAMESPACE: '',
      BENCH_DATAPLANE_DEPLOYMENT: 'bench-nginx', BENCH_DATAPLANE_PARAMETERS_KIND: '', BENCH_DATAPLANE_PARAMETERS_NAMESPACE: '',
      BENCH_DATAPLANE_PARAMETERS_NAME: '', BENCH_DATAPLANE_PARAMETERS_REPLICAS: 'spec.replicas' }, settings) });
    eq(scaledObject(cfg({})), 'Deployment bench/bench-nginx');
    eq(scaledObject(cfg({ BENCH_DATAPLANE_PARAMETERS_KIND: 'NginxProxy.gateway.nginx.org', BENCH_DATAPLANE_PARAMETERS_NAME: 'p',
      BENCH_DATAPLANE_PARAMETERS_REPLICAS: 'spec.kubernetes.deployment.replicas' })),
    'NginxProxy bench/p spec.kubernetes.deployment.replicas');
  });
  check('dataplane: the parameters kind and field settings are validated at init, naming what is allowed', () => {
    const declared = {
      BENCH_DATAPLANE_PARAMETERS_KIND: { type: 'apiKind', default: '' },
      BENCH_DATAPLANE_PARAMETERS_REPLICAS: { type: 'fieldPath', default: 'spec.replicas' },
    };
    eq(loadConfig({ BENCH_DATAPLANE_PARAMETERS_KIND: 'NginxProxy.gateway.nginx.org',
      BENCH_DATAPLANE_PARAMETERS_REPLICAS: 'spec.kubernetes.deployment.replicas' }, {}, declared).settings,
    { BENCH_DATAPLANE_PARAMETERS_KIND: 'NginxProxy.gateway.nginx.org', BENCH_DATAPLANE_PARAMETERS_REPLICAS: 'spec.kubernetes.deployment.replicas' });
    eq(loadConfig({}, {}, declared).settings, { BENCH_DATAPLANE_PARAMETERS_KIND: '', BENCH_DATAPLANE_PARAMETERS_REPLICAS: 'spec.replicas' });
    throwsWith(() => loadConfig({ BENCH_DATAPLANE_PARAMETERS_KIND: 'nginxproxies' }, {}, declared),
      /^invalid BENCH_DATAPLANE_PARAMETERS_KIND="nginxproxies": expected empty or a kind and its API group, e\.g\. NginxProxy\.gateway\.nginx\.org$/);
    throwsWith(() => loadConfig({ BENCH_DATAPLANE_PARAMETERS_REPLICAS: 'metadata.name' }, {}, declared),
      /^invalid BENCH_DATAPLANE_PARAMETERS_REPLICAS="metadata\.name": expected a field under spec, its keys joined by dots, e\.g\. spec\.replicas$/);
    throwsWith(() => loadConfig({ BENCH_DATAPLANE_PARAMETERS_REPLICAS: 'spec..replicas' }, {}, declared),
      /^invalid BENCH_DATAPLANE_PARAMETERS_REPLICAS="spec\.\.replicas"/);
  });
  check('dataplane: a step never Ready is given up (ready_ms null), and the next step closes an open one', () => {
    const d = newDataplaneTracker({ giveUpMs: 10000 });
    d.scaled(1, 2, 0);
    d.tick(9999);
    eq(d.ready(), false);
    d.tick(10000);
    eq([d.ready(), d.take()], [true, [{ step: 1, from: 1, to: 2, ready_ms: null, probe_failures: 0 }]]);
    d.scaled(2, 1, 11000);
    d.scaled(1, 2, 12000);
    eq(d.take(), [{ step: 2, from: 2, to: 1, ready_ms: null, probe_failures: 0 }]);
    eq(d.full(), false);
  });
  check('dataplane: gradual moves one replica per step, abrupt straight to each level', () => {
    eq(dataplaneSteps(1, [3, 1], 'gradual'), [2, 3, 2, 1]);
    eq(dataplaneSteps(1, [3, 1], 'abrupt'), [3, 1]);
    eq(dataplaneSteps(2, [2, 4], 'abrupt'), [4], 'a level where it stands adds no step');
    eq(dataplaneSteps(1, [1], 'gradual'), []);
    throwsWith(() => dataplaneSteps(1, [2], 'sudden'), /^dataplane mode "sudden": expected gradual or abrupt$/);
    eq(MAX_STEPS, 50);
  });
  check('dataplane: the levels and mode settings are validated at init, naming what is allowed', () => {
    const declared = {
      BENCH_DATAPLANE_LEVELS: { type: 'counts', default: '3,1', max: 100 },
      BENCH_DATAPLANE_MODE: { type: 'oneOf', default: 'gradual', values: ['gradual', 'abrupt'] },
    };
    eq(loadConfig({ BENCH_DATAPLANE_LEVELS: '2, 4,1' }, {}, declared).settings,
      { BENCH_DATAPLANE_LEVELS: [2, 4, 1], BENCH_DATAPLANE_MODE: 'gradual' });
    throwsWith(() => loadConfig({ BENCH_DATAPLANE_LEVELS: '3,0' }, {}, declared),
      /^invalid BENCH_DATAPLANE_LEVELS="3,0": expected whole numbers from 1 to 100, separated by commas \(e\.g\. 1,3,1\)$/);
    throwsWith(() => loadConfig({ BENCH_DATAPLANE_LEVELS: '3;1' }, {}, declared), /^invalid BENCH_DATAPLANE_LEVELS="3;1"/);
    throwsWith(() => loadConfig({ BENCH_DATAPLANE_MODE: 'sudden' }, {}, declared),
      /^invalid BENCH_DATAPLANE_MODE="sudden": expected one of gradual, abrupt$/);
  });
}

function churnContextTests() {
  check('churn function: steps run once in order, holds in strings or ms, nothing after it returns', () => {
    const f = runFake((k8s, t) => {
      t.scale(5);
      t.hold('15s');
      t.scale(t.settings.BENCH_SPIKE_REPLICAS);
      t.hold(t.settings.BENCH_SPIKE_HOLD);
      t.scale(5);
    }, 60000, { BENCH_SPIKE_REPLICAS: 10, BENCH_SPIKE_HOLD: 20000 });
    eq([f.log, f.over, f.now()], [[[0, 'scale', 5], [15000, 'scale', 10], [35000, 'scale', 5]], undefined, 35000]);
  });
  check('churn function: an endless loop stops where the load ends, the hold cut at the end', () => {
    const f = runFake((k8s, t) => {
      for (;;) {
        t.scale(5);
        t.hold('12s');
        t.scale(7);
        t.hold(10000);
      }
    }, 30000);
    eq([f.log, f.over, f.now()], [[[0, 'scale', 5], [12000, 'scale', 7], [22000, 'scale', 5]], true, 30000]);
  });
  check('churn function: rollout and killPod count as changes; none at or after the end', () => {
    const f = runFake((k8s, t) => {
      t.hold('1s');
      t.rollout();
      t.hold('1s');
      t.killPod();
      t.hold('1s');
      t.killPod();
    }, 3000);
    eq([f.log, f.over], [[[1000, 'rollout'], [2000, 'podkill']], true]);
    eq(runFake((k8s, t) => t.scale(3), 0).log, [], 'a churn starting after the end changes nothing');
  });
  check('churn function: controller pods deleted one at a time, each after the last recovered', () => {
    const script = (k8s, t) => {
      t.hold('10s');
      for (const pod of t.controllerPods()) {
        t.killControllerPod(pod);
        t.waitRecovered('60s');
        t.hold('10s');
      }
    };
    const f = runFake(script, 120000, {}, 4000);
    eq([f.log, f.over, f.now()], [[[10000, 'controller_podkill', 'ctl-a'], [24000, 'controller_podkill', 'ctl-b']], undefined, 38000]);
    const never = runFake(script, 120000, {}, undefined);
    eq([never.log, never.over], [[[10000, 'controller_podkill', 'ctl-a'], [80000, 'controller_podkill', 'ctl-b']], true],
      'a pod that never recovers: the wait gives up after 60 s, the next pod follows');
  });
  check('churn function: bad arguments are refused with what is allowed', () => {
    const { t } = fakeChurn(60000);
    throwsWith(() => t.scale(1001), /^t\.scale\(1001\): expected a whole number of replicas from 0 to 1000$/);
    throwsWith(() => t.scale('5'), /^t\.scale\("5"\)/);
    throwsWith(() => t.hold('soon'), /^invalid t\.hold\(\)="soon": expected a positive duration/);
    throwsWith(() => t.hold(-5), /^t\.hold\(-5\): expected a duration like '15s' or milliseconds$/);
    throwsWith(() => t.killControllerPod(), /^t\.killControllerPod\(undefined\): expected a pod name from t\.controllerPods\(\)$/);
    throwsWith(() => t.waitRecovered('later'), /^invalid t\.waitRecovered\(\)="later"/);
    throwsWith(() => t.scaleDataplane(0), /^t\.scaleDataplane\(0\): expected a whole number of replicas from 1 to 1000 /);
    throwsWith(() => t.waitDataplaneReady('later'), /^invalid t\.waitDataplaneReady\(\)="later"/);
    eq(t.remainingMs(), 60000);
  });
  check('churn function: the data plane scaled step by step, each after the last was Ready', () => {
    const script = (k8s, t) => {
      t.hold('10s');
      for (const n of dataplaneSteps(t.dataplaneReplicas(), [3, 1], 'abrupt')) {
        t.scaleDataplane(n);
        t.waitDataplaneReady('60s');
        t.hold('10s');
      }
    };
    const f = runFake(script, 120000, {}, 4000);
    eq([f.log, f.over, f.now()], [[[10000, 'dataplane_scale', 3], [24000, 'dataplane_scale', 1]], undefined, 38000]);
    const never = runFake(script, 120000, {}, undefined);
    eq([never.log, never.over], [[[10000, 'dataplane_scale', 3], [80000, 'dataplane_scale', 1]], true],
      'a step never Ready: the wait gives up after 60 s, the next step follows');
  });
}

// long-lived: its list settings, churn, reload route and summary section
function longLivedTests() {
  check('long-lived: a list setting takes known words in order, refuses others naming them', () => {
    eq(parse.parseWords('X', 'backend,reload,backend', ['reload', 'backend'], false, 'none'), ['backend', 'reload', 'backend']);
    eq(parse.parseWords('X', 'none', ['reload'], false, 'none'), []);
    throwsWith(() => parse.parseWords('X', 'reload,nap', ['reload', 'backend'], false, 'none'),
      /^invalid X="reload,nap": expected a list of reload, backend, separated by commas, or none for none$/);
    throwsWith(() => parse.parseWords('K', 'http,http', ['http', 'grpc'], true, ''),
      /^invalid K="http,http": expected some of http, grpc, separated by commas, each at most once$/);
    throwsWith(() => parse.parseWords('K', '', ['http'], true, ''), /^invalid K="": /);
  });
  const settings = { BENCH_LONGLIVED_HOLD: 8000, BENCH_LONGLIVED_DISRUPTIONS: ['reload', 'backend', 'controller'],
    BENCH_STREAM_REPLICAS: 3, BENCH_CONTROLLER_HOLD: 10000, BENCH_CONTROLLER_READY_TIMEOUT: 60000 };
  check('long-lived: the disruptions in order, each held, the stream backend +2 and back', () => {
    const f = runFake(longLivedChurn, 200000, settings, 4000);
    eq([f.log, f.over, f.now()], [[[8000, 'reload_route_created'], [16000, 'reload_route_deleted'], [24000, 'stream_scale', 5],
      [32000, 'stream_scale', 3], [40000, 'controller_podkill', 'ctl-a'], [54000, 'controller_podkill', 'ctl-b']], undefined, 76000]);
    const reversed = runFake(longLivedChurn, 200000, Object.assign({}, settings, { BENCH_LONGLIVED_DISRUPTIONS: ['backend', 'reload'] }), 4000);
    eq(reversed.log.map((e) => e[1]), ['stream_scale', 'stream_scale', 'reload_route_created', 'reload_route_deleted']);
  });
  check('long-lived: the reload route is deleted when the load ends during its hold', () => {
    const f = runFake(longLivedChurn, 12000, settings, 4000);
    eq([f.log, f.over], [[[8000, 'reload_route_created'], [12000, 'reload_route_deleted']], true]);
  });
  check('long-lived: t.scaleStream refuses what is no replica count', () => {
    const { t } = fakeChurn(60000);
    throwsWith(() => t.scaleStream(0), /^t\.scaleStream\(0\): expected a whole number of replicas from 1 to 1000$/);
  });
  check('long-lived: the reload route on the test host, labelled with the run, of BENCH_ROUTE_KIND', () => {
    const cfg = loadConfig({ BENCH_TESTID: 'run-1', BENCH_NAMESPACE: 'ns1', BENCH_TARGET_HOST: 'bench.local:8443',
      BENCH_ROUTE_KIND: 'ingress', BENCH_INGRESS_CLASS: 'traefik' });
    const i = reloadRoute(cfg);
    eq([i.kind, i.obj.kind, i.obj.metadata, i.obj.spec.ingressClassName, i.obj.spec.rules[0].host, i.obj.spec.rules[0].http.paths[0].path],
      ['ingress', 'Ingress', { name: 'bench-route-i-reload', namespace: 'ns1', labels: { [ROUTE_LABEL]: 'run-1' } }, 'traefik',
        'bench.local', '/bench-reload']);
    const h = reloadRoute(loadConfig({ BENCH_TARGET_URL: 'https://gw.example:443', BENCH_ROUTE_KIND: 'httproute' }));
    eq([h.obj.kind, h.obj.spec.hostnames, h.obj.spec.rules[0].backendRefs[0].name, h.obj.spec.parentRefs[0].name],
      ['HTTPRoute', ['gw.example'], 'bench-backend', 'bench']);
    eq(streamTarget({ namespace: 'ns1', deployment: 'bench-backend', settings: { BENCH_STREAM_DEPLOYMENT: 's' } }).deployment, 's');
  });
  check('long-lived: the gate fails on a stream broken by the path or a lost request, not on the backend\'s end', () => {
    const counts = {};
    const data = { metrics: new Proxy({}, { get: (o, key) => (key in counts ? { values: { count: counts[key] } } : undefined) }) };
    const cfg = { settings: { BENCH_LONGLIVED_KINDS: ['http', 'grpc'], BENCH_LONGLIVED_STREAMS: 2, BENCH_LONGLIVED_INTERVAL: 100,
      BENCH_LONGLIVED_DISRUPTIONS: ['backend'], BENCH_LONGLIVED_HOLD: 8000 } };
    const none = { connection: 0, timeout: 0, read: 0, http_5xx: 0, http_4xx: 0, other: 0 };
    counts['bench_streams_broken{kind:grpc,cause:backend_stop}'] = 2;
    counts['bench_streams_opened{kind:grpc}'] = 4;
    const ok = longLivedSummary.section(data, cfg, none);
    eq([ok.broken, ok.broken_by_backend, ok.broken_by_path, ok.by_kind.grpc.opened, ok.gate.passed], [2, 2, 0, 4, true]);
    counts['bench_streams_broken{kind:http,cause:reset}'] = 1;
    eq(longLivedSummary.section(data, cfg, none).gate.passed, false);
    delete counts['bench_streams_broken{kind:http,cause:reset}'];
    eq(longLivedSummary.section(data, cfg, Object.assign({}, none, { read: 1 })).gate.passed, false);
    eq(Object.keys(longLivedSummary.thresholds(cfg)).filter((k) => /count==0/.test(longLivedSummary.thresholds(cfg)[k])),
      ['bench_errors{role:load}', 'bench_streams_broken{cause:reset}']);
  });
}

// The VUs a script plans at once: overlapping scenarios add up, consecutive ones reuse VUs, each
// executor counted by what k6 initializes for it, the runner's share of each.
function memoryPlanTests() {
  const rate = (maxVUs, start, duration) => ({ executor: 'constant-arrival-rate', rate: 100, duration, preAllocatedVUs: 10,
    maxVUs, startTime: start });
  check('memory plan: overlapping scenarios add up, consecutive ones do not', () => {
    eq(plannedVUs({ a: rate(100, '0s', '30s'), b: rate(50, '10s', '10s') }, 1), { total: 150, by: { a: 100, b: 50 } });
    eq(plannedVUs({ a: rate(100, '0s', '30s'), b: rate(50, '30s', '10s') }, 1).total, 100);
    eq(plannedVUs({ a: rate(100, '0s', '30s'), b: rate(50, '30s', '10s') }, 0.5).by, { a: 50, b: 25 });
  });
  check('memory plan: each executor counted by the VUs k6 initializes', () => {
    const spike = { executor: 'ramping-arrival-rate', preAllocatedVUs: 20, maxVUs: 16000, stages: [{ target: 10000, duration: '10s' }] };
    const ramp = { executor: 'ramping-vus', startVUs: 3, stages: [{ target: 40, duration: '10s' }, { target: 7, duration: '5s' }] };
    eq(plannedVUs({ spike, ramp, churn: { executor: 'per-vu-iterations', vus: 1, iterations: 1 } }, 1).by,
      { spike: 16000, ramp: 40, churn: 1 });
    eq(plannedVUs({ c: { executor: 'constant-vus', vus: 12, duration: '1m30s' } }, 1).total, 12);
  });
  check('memory plan: a plan beyond the memory limit is refused, naming each scenario', () => {
    const mib = 1048576;
    const spike = { load: rate(2000, '0s', '60s'), spike: rate(16000, '20s', '10s') };
    throwsWith(() => checkPlannedMemory(spike, 1, 870 * mib), /plans 18000 VUs at once on this runner \(load 2000, spike 16000\): about 6780 MB .*above its memory limit of 870 MiB/);
    // just under and just over the limit: baseMB + perVuMB x VUs against the limit in MiB
    const vus = Math.floor((870 - RUNNER_MEMORY.baseMB) / RUNNER_MEMORY.perVuMB);
    eq(checkPlannedMemory({ load: rate(vus, '0s', '1s') }, 1, 870 * mib).vus, vus);
    throwsWith(() => checkPlannedMemory({ load: rate(vus + 1, '0s', '1s') }, 1, 870 * mib), /above its memory limit of 870 MiB/);
    eq(checkPlannedMemory(spike, 1, Number.MAX_SAFE_INTEGER * 2), null, 'no limit: no check');
    eq(checkPlannedMemory(spike, 1, 0), null, 'unknown limit: no check');
  });
}

// A script's own load shape (experiment({load})): bench's role, exec and connection budget added,
// the user's own values kept, the warm-up before it, its planned mean rate, its length held to
// BENCH_DURATION.
function loadShapeTests() {
  const cfg = { rate: 10, durationMs: 6000, warmupMs: 0, connections: 4, maxConnections: 8 };
  const ramp = { executor: 'ramping-arrival-rate', startRate: 10, maxVUs: 40, tags: { role: 'mine', kind: 'x' },
    stages: [{ target: 10, duration: '2s' }, { target: 50, duration: '0s' }, { target: 50, duration: '2s' }, { target: 10, duration: '2s' }] };
  check('load shape: one k6 scenario becomes bench\'s measured load, its own values kept', () => {
    const { load } = shapeScenarios(cfg, ramp, 'load', '1500ms', () => ({}));
    eq([load.exec, load.tags, load.preAllocatedVUs, load.maxVUs, load.timeUnit, load.startTime, load.gracefulStop],
      ['load', { role: 'load', kind: 'x' }, 4, 40, '1s', '0ms', '1500ms']);
    eq(load.stages.map((st) => st.duration), ['2000ms', '0ms', '2000ms', '2000ms']);
  });
  check('load shape: planned requests over its length (ramps are linear), VU-based executors have no target rate', () => {
    // 10 x 2 + 50 x 2 + (50 + 10) / 2 x 2 = 180 requests in 6 s
    eq(planShape(shapeScenarios(cfg, ramp, 'load', '1s', () => ({}))), { durationMs: 6000, rate: 30 });
    const two = { a: { executor: 'constant-arrival-rate', rate: 20, duration: '3s' },
      b: { executor: 'constant-vus', vus: 2, duration: '3s', startTime: '3s' } };
    eq(planShape(shapeScenarios(cfg, two, 'load', '1s', () => ({}))), { durationMs: 6000, rate: null });
  });
  check('load shape: after the warm-up, and its length must be BENCH_DURATION', () => {
    const warm = Object.assign({}, cfg, { warmupMs: 1000 });
    const out = shapeScenarios(warm, ramp, 'load', '1s', () => ({ warmup: { tags: { role: 'warmup' } } }));
    eq([Object.keys(out), out.load.startTime], [['warmup', 'load'], '1000ms']);
    throwsWith(() => shapeScenarios(Object.assign({}, cfg, { durationMs: 5000 }), ramp, 'load', '1s', () => ({})),
      /the load shape lasts 6000 ms, BENCH_DURATION 5000 ms/);
    throwsWith(() => shapeScenarios(cfg, { a: { rate: 1 } }, 'load', '1s', () => ({})), /scenario a has no executor/);
  });
  check('summary: the script\'s own section under extra, its own line closing the table', () => {
    const report = fakeReport({ section: (data, s) => ({ seen: s.requests.total }), textLine: (s) => `own line ${s.extra.seen}` });
    const s = buildSummary(fakeData(), report, {});
    eq(s.extra, { seen: s.requests.total });
    const out = summaryOutputs(s, '/tmp', report.textLine);
    eq(out.stdout.includes(`own line ${s.requests.total}\nBENCH_SUMMARY_JSON_BEGIN`), true, 'the line ends the table');
  });
}

export default function () {
  configTests();
  scriptSettingTests();
  experimentTests();
  churnContextTests();
  routeTests();
  errorTests();
  convergenceTests();
  recoveryTests();
  dataplaneTests();
  rolloutTests();
  failoverTests();
  summaryTests();
  kubeTests();
  restoreTests();
  kneeTests();
  longLivedTests();
  memoryPlanTests();
  loadShapeTests();
  console.log(`unit: ${passed} passed, ${failed} failed`);
}

// The k6 end-of-test summary would only repeat the threshold: print nothing.
export function handleSummary() {
  return {};
}

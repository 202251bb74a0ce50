// Scenario configuration: every BENCH_* variable, its default and its validation, in one place,
// plus the settings an entry script declares for itself (experiment({settings}), SETTING_TYPES).
// Entry scripts take it through run-config.js (runConfig(__ENV, overrides, settings): loadConfig in
// VU 0, the other VUs read its result) in the init context; a bad value throws an Error naming the
// variable, the value and what is allowed, so `k6 run` stops before any load. The parsers are
// parse.js's (durations: duration.js's).
'use strict';
const {
  parseDuration, parsePositiveInt, parseBool, parseUrl, parsePath, parseChurnPattern, parseEnvironment,
  parseRouteKind, parseBackends, parseOptionalLabel, parseDomain, parseLabelSelector, parseDnsName, parseTestId,
  parseCounts, parseOneOf, parseWords, parseApiKind, parseFieldPath,
} = require('./parse.js');
const { durationMs: durationOf } = require('./duration.js');

function fail(name, value, allowed) {
  throw new Error(`invalid ${name}=${JSON.stringify(value)}: ${allowed}`);
}

// parseWarmup(name, value, durationMs): the warm-up in ms, 0 for none ("0s"). It runs before the
// measured duration, so it may not be longer than it: a longer one is usually the two swapped.
function parseWarmup(name, value, durationMs) {
  const ms = durationOf(String(value));
  const allowed = 'expected 0s (no warm-up) or a duration like 500ms, 10s or 1m';
  if (!(ms >= 0)) fail(name, value, allowed);
  if (ms > durationMs) {
    fail(name, value, `${allowed}, at most BENCH_DURATION (${durationMs / 1000} s): the warm-up runs at the same rate `
      + 'before the measured duration and is left out of every figure');
  }
  return ms;
}

// Defaults for every variable (scenarios/interfaces.md lists the same table).
const DEFAULTS = Object.freeze({
  BENCH_TARGET_URL: 'http://127.0.0.1:8080',
  BENCH_TARGET_HOST: '',
  BENCH_PATH: '/',
  BENCH_URL_INGRESS: '',
  BENCH_URL_CLUSTERIP: '',
  BENCH_URL_NODEPORT: '',
  BENCH_URL_POD: '',
  BENCH_URL_GATEWAY: '', // base URL of the Gateway's data plane (target gateway, route experiments)
  BENCH_RATE: '1000',
  BENCH_DURATION: '60s',
  BENCH_WARMUP: '0s', // at the target rate before BENCH_DURATION, left out of every figure; 0s = none
  BENCH_CONNECTIONS: '100',
  BENCH_MAX_CONNECTIONS: '', // empty = BENCH_CONNECTIONS
  BENCH_TIMEOUT: '2s',
  BENCH_READY_TIMEOUT: '120s', // setup waits this long for the target's first 2xx/3xx (a data plane starting)
  BENCH_KEEPALIVE: 'true',
  BENCH_INSECURE_TLS: 'true',
  BENCH_NAMESPACE: 'default',
  BENCH_DEPLOYMENT: 'bench-backend',
  BENCH_POD_SELECTOR: 'app.kubernetes.io/component=backend',
  BENCH_CHURN_PATTERN: '5:12s,7:10s',
  BENCH_PODKILL_INTERVAL: '10s',
  BENCH_ROLL_INTERVAL: '30s',
  BENCH_KUBECONFIG: '',
  BENCH_TESTID: 'local',
  BENCH_SUMMARY_DIR: '.',
  BENCH_ENVIRONMENT: '', // JSON object: what the run ran on (summary settings.environment)
  // Route experiments (route-propagation, route-change, route-scale; lib/routes.js)
  BENCH_GATEWAY_NAME: 'bench', // the Gateway the HTTPRoutes attach to (parentRefs)
  BENCH_GATEWAY_NAMESPACE: '', // empty = BENCH_NAMESPACE
  BENCH_GATEWAY_LISTENER: '', // parentRef sectionName; empty = every listener of the Gateway
  BENCH_INGRESS_CLASS: '', // ingressClassName of the Ingresses; empty = the cluster's default class
  BENCH_ROUTE_KIND: 'httproute', // httproute, ingress, or both (the migration A/B, one after the other)
  BENCH_ROUTE_COUNT: '20', // routes per kind (route-change 10, route-scale 1000)
  BENCH_ROUTE_INTERVAL: '2s', // between two route creations (propagation) or changes (route-change 1s)
  BENCH_ROUTE_TIMEOUT: '60s', // a route not serving 200 this long after its apply is unconverged
  BENCH_ROUTE_DOMAIN: 'routes.bench.local', // route i answers on h-<i>.<domain> (Ingress: i-<i>.<domain>)
  BENCH_ROUTE_BACKENDS: 'bench-backend:80,bench-backend-headless:8080', // service:port; route-change cycles them
});

// BENCH_* names the project's own shell tooling exports (ci/lib/common.sh, ci/test/all.sh). They
// reach k6 through the environment of local runs and are not scenario options.
// The repository's own scripts' variables (ci/README.md), which a local k6 run inherits from them.
const TOOLING_VARIABLES = ['BENCH_ROOT', 'BENCH_CACHE', 'BENCH_TOOLS', 'BENCH_APT_LOCK'];
const TOOLING_PREFIXES = ['BENCH_TEST_', 'BENCH_E2E_'];

// Kubernetes injects service-link variables for every Service in the namespace; a release named
// `bench` has Services named bench-*, so BENCH_BACKEND_PORT_80_TCP_PORT and the like reach the runner
// (k6-operator v1.5.0 cannot turn service links off).
const SERVICE_LINK_VARIABLE =
  /_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_[0-9]+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)$/;

// checkUnknownVariables fails on a BENCH_* variable that no scenario reads (usually a typo).
// declared: the names of the entry script's own settings.
function checkUnknownVariables(env, declared) {
  const own = declared || [];
  for (const key of Object.keys(env)) {
    if (!key.startsWith('BENCH_') || key in DEFAULTS || own.includes(key) || TOOLING_VARIABLES.includes(key)) continue;
    if (TOOLING_PREFIXES.some((prefix) => key.startsWith(prefix))) continue;
    if (SERVICE_LINK_VARIABLE.test(key)) continue;
    throw new Error(`unknown variable ${key}: allowed are ${Object.keys(DEFAULTS).concat(own).join(', ')}`);
  }
}

// The types a script's own setting may have: what its value becomes (durations in ms, counts and
// bools as numbers and booleans, counts as an array of numbers; `max` bounds a count or each of
// counts, default 1000000; oneOf takes `values`, the words allowed; words a comma-separated list of
// them, `unique` each at most once, `none` a word for the empty list).
const SETTING_TYPES = Object.freeze({
  count: (name, text, d) => parsePositiveInt(name, text, d.max || 1000000),
  duration: parseDuration,
  bool: parseBool,
  path: parsePath,
  url: parseUrl,
  dnsName: parseDnsName,
  apiKind: parseApiKind,
  fieldPath: parseFieldPath,
  labelSelector: parseLabelSelector,
  churnPattern: parseChurnPattern,
  text: (name, text) => String(text).trim(),
  counts: (name, text, d) => parseCounts(name, text, d.max || 1000000),
  oneOf: (name, text, d) => parseOneOf(name, text, d.values || []),
  words: (name, text, d) => parseWords(name, text, d.values || [], Boolean(d.unique), d.none || ''),
});

// scriptSettings(env, declared): the entry script's own settings, {values, texts}: each declared
// {type, default, max} (a key of SETTING_TYPES) read from env (empty = the default), validated like
// a BENCH_* variable. A declaration itself is checked first: a BENCH_* name of its own, a known
// type, a default its type accepts.
function scriptSettings(env, declared) {
  const values = {};
  const texts = {};
  for (const name of Object.keys(declared || {})) {
    const d = declared[name] || {};
    const where = `the script's setting ${name}`;
    if (!/^BENCH_[A-Z0-9_]+$/.test(name)) {
      throw new Error(`${where}: a setting's name is BENCH_ and capitals, digits or _, e.g. BENCH_SPIKE_REPLICAS`);
    }
    if (name in DEFAULTS || TOOLING_VARIABLES.includes(name)) {
      throw new Error(`${where}: ${name} is one of bench's own variables; give the script a default for it `
        + 'with experiment({defaults}) instead');
    }
    const parse = SETTING_TYPES[d.type];
    if (!parse) throw new Error(`${where}: type ${JSON.stringify(d.type)}; expected one of ${Object.keys(SETTING_TYPES).join(', ')}`);
    if (d.default === undefined || d.default === null) throw new Error(`${where}: no default (every setting has one)`);
    try {
      parse(name, String(d.default), d);
    } catch (e) {
      throw new Error(`${where}: its default is refused: ${e.message}`);
    }
    const given = env[name] !== undefined && String(env[name]).trim() !== '';
    texts[name] = given ? String(env[name]).trim() : String(d.default);
    values[name] = parse(name, texts[name], d);
  }
  return { values: Object.freeze(values), texts: Object.freeze(texts) };
}

// kubernetesApi(env, benchKubeconfig): {kubeconfig, source}: the kubeconfig file the scenarios use
// (BENCH_KUBECONFIG, else the first file KUBECONFIG lists, as kubectl reads it; "" = the in-cluster
// service account) and a description of where API calls go, for error messages.
function kubernetesApi(env, benchKubeconfig) {
  const own = String(benchKubeconfig).trim();
  if (own) return { kubeconfig: own, source: `kubeconfig ${own} (BENCH_KUBECONFIG)` };
  const first = String(env.KUBECONFIG || '').split(':').map((p) => p.trim()).find((p) => p !== '');
  if (first) return { kubeconfig: first, source: `kubeconfig ${first} (KUBECONFIG)` };
  if (env.KUBERNETES_SERVICE_HOST) return { kubeconfig: '', source: 'the in-cluster service account' };
  return {
    kubeconfig: '',
    source: 'no Kubernetes API (not in a pod, and neither BENCH_KUBECONFIG nor KUBECONFIG names a kubeconfig file)',
  };
}

// loadConfig(env, overrides, settings): the validated configuration. `overrides` holds
// experiment-specific defaults (e.g. {BENCH_PATH: '/bytes/1m'} for throughput); a variable set in env
// always wins. `settings` declares the entry script's own settings (scriptSettings): their values are
// `settings`, their texts `settingTexts` (the summary's settings.script).
function loadConfig(env, overrides, settings) {
  checkUnknownVariables(env, Object.keys(settings || {}));
  for (const key of Object.keys(overrides || {})) {
    if (!(key in DEFAULTS)) {
      throw new Error(`the script's default for ${key}: not one of bench's variables (allowed are `
        + `${Object.keys(DEFAULTS).join(', ')}); declare a setting of its own with experiment({settings})`);
    }
  }
  const own = scriptSettings(env, settings);
  const raw = Object.assign({}, DEFAULTS, overrides || {});
  for (const key of Object.keys(DEFAULTS)) {
    if (env[key] !== undefined && env[key] !== '') raw[key] = env[key];
  }
  const connections = parsePositiveInt('BENCH_CONNECTIONS', raw.BENCH_CONNECTIONS, 100000);
  const maxConnections = raw.BENCH_MAX_CONNECTIONS === ''
    ? connections
    : parsePositiveInt('BENCH_MAX_CONNECTIONS', raw.BENCH_MAX_CONNECTIONS, 100000);
  if (maxConnections < connections) {
    fail('BENCH_MAX_CONNECTIONS', raw.BENCH_MAX_CONNECTIONS,
      `must be at least BENCH_CONNECTIONS (${connections})`);
  }
  const pathUrls = {};
  for (const [pathName, key] of [['ingress', 'BENCH_URL_INGRESS'], ['clusterip', 'BENCH_URL_CLUSTERIP'],
    ['nodeport', 'BENCH_URL_NODEPORT'], ['pod', 'BENCH_URL_POD'], ['gateway', 'BENCH_URL_GATEWAY']]) {
    if (raw[key] !== '') pathUrls[pathName] = parseUrl(key, raw[key]);
  }
  const targetUrl = parseUrl('BENCH_TARGET_URL', raw.BENCH_TARGET_URL);
  const targetHost = String(raw.BENCH_TARGET_HOST).trim();
  if (targetHost !== '' && !/^[A-Za-z0-9.-]+(:\d+)?$/.test(targetHost)) {
    fail('BENCH_TARGET_HOST', targetHost, 'expected a host name such as bench.local (optionally :port)');
  }
  const namespace = parseDnsName('BENCH_NAMESPACE', raw.BENCH_NAMESPACE);
  const durationMs = parseDuration('BENCH_DURATION', raw.BENCH_DURATION);
  const api = kubernetesApi(env, raw.BENCH_KUBECONFIG);
  const gatewayNamespace = String(raw.BENCH_GATEWAY_NAMESPACE).trim() === ''
    ? namespace : parseDnsName('BENCH_GATEWAY_NAMESPACE', raw.BENCH_GATEWAY_NAMESPACE);
  return Object.freeze({
    settings: own.values,
    settingTexts: own.texts,
    targetUrl,
    targetHost,
    path: parsePath('BENCH_PATH', raw.BENCH_PATH),
    pathUrls,
    rate: parsePositiveInt('BENCH_RATE', raw.BENCH_RATE, 1000000),
    durationMs,
    warmupMs: parseWarmup('BENCH_WARMUP', raw.BENCH_WARMUP, durationMs),
    warmupText: String(raw.BENCH_WARMUP).trim(),
    connections,
    maxConnections,
    timeoutMs: parseDuration('BENCH_TIMEOUT', raw.BENCH_TIMEOUT),
    readyTimeoutMs: parseDuration('BENCH_READY_TIMEOUT', raw.BENCH_READY_TIMEOUT),
    keepalive: parseBool('BENCH_KEEPALIVE', raw.BENCH_KEEPALIVE),
    insecureTls: parseBool('BENCH_INSECURE_TLS', raw.BENCH_INSECURE_TLS),
    namespace,
    deployment: parseDnsName('BENCH_DEPLOYMENT', raw.BENCH_DEPLOYMENT),
    podSelector: parseLabelSelector('BENCH_POD_SELECTOR', raw.BENCH_POD_SELECTOR),
    churnPatternText: String(raw.BENCH_CHURN_PATTERN).trim(),
    churnPattern: parseChurnPattern('BENCH_CHURN_PATTERN', raw.BENCH_CHURN_PATTERN),
    podkillIntervalMs: parseDuration('BENCH_PODKILL_INTERVAL', raw.BENCH_PODKILL_INTERVAL),
    rollIntervalMs: parseDuration('BENCH_ROLL_INTERVAL', raw.BENCH_ROLL_INTERVAL),
    kubeconfig: api.kubeconfig,
    apiSource: api.source,
    testid: parseTestId('BENCH_TESTID', raw.BENCH_TESTID),
    summaryDir: String(raw.BENCH_SUMMARY_DIR).trim() || '.',
    environment: parseEnvironment('BENCH_ENVIRONMENT', raw.BENCH_ENVIRONMENT),
    gateway: Object.freeze({
      name: parseDnsName('BENCH_GATEWAY_NAME', raw.BENCH_GATEWAY_NAME),
      namespace: gatewayNamespace,
      listener: parseOptionalLabel('BENCH_GATEWAY_LISTENER', raw.BENCH_GATEWAY_LISTENER),
    }),
    routes: Object.freeze({
      kindText: String(raw.BENCH_ROUTE_KIND).trim(),
      kinds: parseRouteKind('BENCH_ROUTE_KIND', raw.BENCH_ROUTE_KIND),
      count: parsePositiveInt('BENCH_ROUTE_COUNT', raw.BENCH_ROUTE_COUNT, 10000),
      intervalMs: parseDuration('BENCH_ROUTE_INTERVAL', raw.BENCH_ROUTE_INTERVAL),
      timeoutMs: parseDuration('BENCH_ROUTE_TIMEOUT', raw.BENCH_ROUTE_TIMEOUT),
      domain: parseDomain('BENCH_ROUTE_DOMAIN', raw.BENCH_ROUTE_DOMAIN),
      backends: parseBackends('BENCH_ROUTE_BACKENDS', raw.BENCH_ROUTE_BACKENDS),
      ingressClass: String(raw.BENCH_INGRESS_CLASS).trim() === ''
        ? '' : parseDnsName('BENCH_INGRESS_CLASS', raw.BENCH_INGRESS_CLASS),
    }),
  });
}

module.exports = {
  parseDuration,
  parsePositiveInt,
  parseBool,
  parseUrl,
  parsePath,
  parseChurnPattern,
  parseEnvironment,
  parseRouteKind,
  parseBackends,
  parseLabelSelector,
  DEFAULTS,
  checkUnknownVariables,
  SETTING_TYPES,
  scriptSettings,
  kubernetesApi,
  loadConfig,
};

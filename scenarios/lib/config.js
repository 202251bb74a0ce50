// Scenario configuration: every BENCH_* variable, its default and its validation, in one place.
// Entry scripts take it through run-config.js (runConfig(__ENV, overrides): loadConfig in VU 0, the
// other VUs read its result) in the init context; a bad value throws an Error naming the variable,
// the value and what is allowed, so `k6 run` stops before any load.

// Defaults for every variable (scenarios/interfaces.md lists the same table).
export const DEFAULTS = Object.freeze({
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
const TOOLING_VARIABLES = ['BENCH_ROOT', 'BENCH_CACHE', 'BENCH_TOOLS', 'BENCH_TEST_PARTS'];

const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60000, h: 3600000 };

function fail(name, value, allowed) {
  throw new Error(`invalid ${name}=${JSON.stringify(value)}: ${allowed}`);
}

// parseDuration('1m30s') -> 90000 (milliseconds). Units: ms, s, m, h; a bare number is seconds.
export function parseDuration(name, value) {
  const text = String(value).trim();
  const allowed = 'expected a positive duration like 500ms, 12s, 1m30s or 2h';
  if (/^\d+(\.\d+)?$/.test(text)) {
    const ms = Number(text) * 1000;
    if (ms <= 0) fail(name, value, allowed);
    return ms;
  }
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let ms = 0;
  let consumed = 0;
  let match;
  while ((match = re.exec(text)) !== null) {
    ms += Number(match[1]) * DURATION_UNITS_MS[match[2]];
    consumed = re.lastIndex;
  }
  if (text === '' || consumed !== text.length || ms <= 0) fail(name, value, allowed);
  return ms;
}

export function parsePositiveInt(name, value, max) {
  const text = String(value).trim();
  const allowed = `expected a whole number from 1 to ${max}`;
  if (!/^\d+$/.test(text)) fail(name, value, allowed);
  const n = Number(text);
  if (n < 1 || n > max) fail(name, value, allowed);
  return n;
}

export function parseBool(name, value) {
  const text = String(value).trim().toLowerCase();
  if (text === 'true' || text === '1' || text === 'yes') return true;
  if (text === 'false' || text === '0' || text === 'no') return false;
  return fail(name, value, 'expected true or false');
}

// parseUrl checks an http(s) base URL and returns it without a trailing slash.
export function parseUrl(name, value) {
  const text = String(value).trim();
  if (!/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(text)) {
    fail(name, value, 'expected an http:// or https:// URL without query, e.g. http://127.0.0.1:8080');
  }
  return text.replace(/\/+$/, '');
}

export function parsePath(name, value) {
  const text = String(value).trim();
  if (!/^\/[^\s#]*$/.test(text)) fail(name, value, 'expected a path starting with /, e.g. /bytes/4k');
  return text;
}

// parseChurnPattern('5:12s,7:10s') -> [{replicas: 5, holdMs: 12000}, {replicas: 7, holdMs: 10000}]
export function parseChurnPattern(name, value) {
  const text = String(value).trim();
  const allowed = 'expected comma-separated replicas:hold steps, e.g. 5:12s,7:10s (replicas 0-1000)';
  if (text === '') fail(name, value, allowed);
  return text.split(',').map((step) => {
    const parts = step.trim().split(':');
    if (parts.length !== 2 || !/^\d+$/.test(parts[0].trim())) fail(name, value, allowed);
    const replicas = Number(parts[0].trim());
    if (replicas > 1000) fail(name, value, allowed);
    let holdMs;
    try {
      holdMs = parseDuration(name, parts[1].trim());
    } catch (e) {
      fail(name, value, allowed);
    }
    return { replicas, holdMs };
  });
}

// parseEnvironment('{"backend_replicas": 5}') -> the object. A flat JSON object describing what the
// run ran on (controller chart and version, replicas, placement) for the summary and the report:
// keys like backend_replicas, values strings, numbers or booleans. Empty = {}.
export function parseEnvironment(name, value) {
  const text = String(value).trim();
  const allowed = 'expected a JSON object of snake_case keys to strings, numbers or booleans, '
    + 'e.g. {"controller_version": "v3.6.12", "backend_replicas": 5}';
  if (text === '') return Object.freeze({});
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    fail(name, value, allowed);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) fail(name, value, allowed);
  for (const [k, v] of Object.entries(parsed)) {
    if (!/^[a-z][a-z0-9_]*$/.test(k) || !['string', 'number', 'boolean'].includes(typeof v)) {
      fail(name, value, allowed);
    }
  }
  return Object.freeze(parsed);
}

export const ROUTE_KINDS = ['httproute', 'ingress'];

// parseRouteKind('both') -> ['httproute', 'ingress']: the kinds a route experiment runs, in order.
export function parseRouteKind(name, value) {
  const text = String(value).trim();
  if (text === 'both') return ROUTE_KINDS.slice();
  if (!ROUTE_KINDS.includes(text)) fail(name, value, 'expected httproute, ingress or both');
  return [text];
}

// parseBackends('a:80,b:8080') -> [{name: 'a', port: 80}, {name: 'b', port: 8080}]: Services by name
// and port number, the backendRefs of the routes a route experiment creates.
export function parseBackends(name, value) {
  const text = String(value).trim();
  const allowed = 'expected comma-separated service:port pairs, e.g. bench-backend:80,bench-backend-headless:8080 '
    + '(Service names are lowercase letters, digits and -, ports 1-65535)';
  if (text === '') fail(name, value, allowed);
  return text.split(',').map((pair) => {
    const m = /^\s*([a-z]([-a-z0-9]{0,61}[a-z0-9])?):(\d{1,5})\s*$/.exec(pair);
    if (!m || Number(m[3]) < 1 || Number(m[3]) > 65535) fail(name, value, allowed);
    return { name: m[1], port: Number(m[3]) };
  });
}

// A DNS-1123 label (RFC 1123), as Kubernetes checks a Gateway listener name (sectionName); empty
// allowed (= unset).
function parseOptionalLabel(name, value) {
  const text = String(value).trim();
  if (text !== '' && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(text)) {
    fail(name, value, 'expected empty or a DNS label (lowercase letters, digits and -, at most 63)');
  }
  return text;
}

function parseDomain(name, value) {
  const text = String(value).trim();
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/.test(text) || text.length > 200) {
    fail(name, value, 'expected a lowercase DNS domain such as routes.bench.local (route hosts are h-<i>.<domain>)');
  }
  return text;
}

// parseLabelSelector('a=b,c=d') -> {a: 'b', c: 'd'} (equality selectors only).
export function parseLabelSelector(name, value) {
  const text = String(value).trim();
  const allowed = 'expected comma-separated key=value labels, e.g. app.kubernetes.io/component=backend';
  const labels = {};
  if (text === '') fail(name, value, allowed);
  for (const term of text.split(',')) {
    const m = /^\s*([A-Za-z0-9][-A-Za-z0-9_./]*)\s*=\s*([-A-Za-z0-9_.]*)\s*$/.exec(term);
    if (!m) fail(name, value, allowed);
    labels[m[1]] = m[2];
  }
  return labels;
}

function parseDnsName(name, value) {
  const text = String(value).trim();
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(text)) {
    fail(name, value, 'expected a Kubernetes name (lowercase letters, digits, - and .)');
  }
  return text;
}

function parseTestId(name, value) {
  const text = String(value).trim();
  if (!/^[A-Za-z0-9][-A-Za-z0-9_.]{0,62}$/.test(text)) {
    fail(name, value, 'expected 1-63 characters: letters, digits, -, _ and . (it becomes a metric tag)');
  }
  return text;
}

// Kubernetes injects service-link variables for every Service in the namespace; a release named
// `bench` has Services named bench-*, so BENCH_BACKEND_PORT_80_TCP_PORT and the like reach the runner
// (k6-operator v1.5.0 cannot turn service links off).
const SERVICE_LINK_VARIABLE =
  /_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_[0-9]+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)$/;

// checkUnknownVariables fails on a BENCH_* variable that no scenario reads (usually a typo).
export function checkUnknownVariables(env) {
  for (const key of Object.keys(env)) {
    if (!key.startsWith('BENCH_') || key in DEFAULTS || TOOLING_VARIABLES.includes(key)) continue;
    if (SERVICE_LINK_VARIABLE.test(key)) continue;
    throw new Error(`unknown variable ${key}: allowed are ${Object.keys(DEFAULTS).join(', ')}`);
  }
}

// kubernetesApi(env, benchKubeconfig): {kubeconfig, source}: the kubeconfig file the scenarios use
// (BENCH_KUBECONFIG, else the first file KUBECONFIG lists, as kubectl reads it; "" = the in-cluster
// service account) and a description of where API calls go, for error messages.
export function kubernetesApi(env, benchKubeconfig) {
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

// loadConfig(env, overrides): the validated configuration. `overrides` holds experiment-specific
// defaults (e.g. {BENCH_PATH: '/bytes/1m'} for throughput); a variable set in env always wins.
export function loadConfig(env, overrides) {
  checkUnknownVariables(env);
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
  const api = kubernetesApi(env, raw.BENCH_KUBECONFIG);
  const gatewayNamespace = String(raw.BENCH_GATEWAY_NAMESPACE).trim() === ''
    ? namespace : parseDnsName('BENCH_GATEWAY_NAMESPACE', raw.BENCH_GATEWAY_NAMESPACE);
  return Object.freeze({
    targetUrl,
    targetHost,
    path: parsePath('BENCH_PATH', raw.BENCH_PATH),
    pathUrls,
    rate: parsePositiveInt('BENCH_RATE', raw.BENCH_RATE, 1000000),
    durationMs: parseDuration('BENCH_DURATION', raw.BENCH_DURATION),
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

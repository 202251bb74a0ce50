// The parsers of bench's settings: each takes the setting's name and its text and returns the value,
// or throws an Error naming the setting, the value and what is allowed. config.js validates every
// BENCH_* variable and a script's own settings (experiment({settings})) with them, in VU 0; an entry
// script may import them too, at the cost of these functions in each of its VUs (about 10 KB;
// scenarios/calibrate/README.md, "Memory per VU"): prefer a declared setting, parsed once in VU 0.
'use strict';
const { parseDuration } = require('./duration.js');

function fail(name, value, allowed) {
  throw new Error(`invalid ${name}=${JSON.stringify(value)}: ${allowed}`);
}

function parsePositiveInt(name, value, max) {
  const text = String(value).trim();
  const allowed = `expected a whole number from 1 to ${max}`;
  if (!/^\d+$/.test(text)) fail(name, value, allowed);
  const n = Number(text);
  if (n < 1 || n > max) fail(name, value, allowed);
  return n;
}

// parseCounts: a comma-separated list of whole numbers from 1 to max, at least one, e.g. "1,3,1".
function parseCounts(name, value, max) {
  const text = String(value).trim();
  const allowed = `expected whole numbers from 1 to ${max}, separated by commas (e.g. 1,3,1)`;
  if (!/^\d+( *, *\d+)*$/.test(text)) fail(name, value, allowed);
  return text.split(',').map((part) => {
    const n = Number(part.trim());
    if (n < 1 || n > max) fail(name, value, allowed);
    return n;
  });
}

// parseWords: a comma-separated list of words `allowed` lists, in the order given (e.g.
// "reload,backend"); unique: each at most once; none: a word meaning the empty list.
function parseWords(name, value, allowed, unique, none) {
  const text = String(value).trim();
  const what = `expected ${unique ? 'some' : 'a list'} of ${allowed.join(', ')}, separated by commas`
    + `${unique ? ', each at most once' : ''}${none ? `, or ${none} for none` : ''}`;
  if (none && text === none) return [];
  const words = text.split(',').map((w) => w.trim());
  if (words.some((w) => !allowed.includes(w))) fail(name, value, what);
  if (unique && new Set(words).size !== words.length) fail(name, value, what);
  return words;
}

// parseOneOf: one of the words `allowed` lists.
function parseOneOf(name, value, allowed) {
  const text = String(value).trim();
  if (!allowed.includes(text)) fail(name, value, `expected one of ${allowed.join(', ')}`);
  return text;
}

function parseBool(name, value) {
  const text = String(value).trim().toLowerCase();
  if (text === 'true' || text === '1' || text === 'yes') return true;
  if (text === 'false' || text === '0' || text === 'no') return false;
  return fail(name, value, 'expected true or false');
}

// parseUrl checks an http(s) base URL and returns it without a trailing slash.
function parseUrl(name, value) {
  const text = String(value).trim();
  if (!/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(text)) {
    fail(name, value, 'expected an http:// or https:// URL without query, e.g. http://127.0.0.1:8080');
  }
  return text.replace(/\/+$/, '');
}

function parsePath(name, value) {
  const text = String(value).trim();
  if (!/^\/[^\s#]*$/.test(text)) fail(name, value, 'expected a path starting with /, e.g. /bytes/4k');
  return text;
}

// parseChurnPattern('5:12s,7:10s') -> [{replicas: 5, holdMs: 12000}, {replicas: 7, holdMs: 10000}]
function parseChurnPattern(name, value) {
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
function parseEnvironment(name, value) {
  const text = String(value).trim();
  const allowed = 'expected a JSON object of snake_case keys to strings, numbers or booleans, '
    + 'e.g. {"controller_version": "v1.2.3", "backend_replicas": 5}';
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

const ROUTE_KINDS = ['httproute', 'ingress'];

// parseRouteKind('both') -> ['httproute', 'ingress']: the kinds a route experiment runs, in order.
function parseRouteKind(name, value) {
  const text = String(value).trim();
  if (text === 'both') return ROUTE_KINDS.slice();
  if (!ROUTE_KINDS.includes(text)) fail(name, value, 'expected httproute, ingress or both');
  return [text];
}

// parseBackends('a:80,b:8080') -> [{name: 'a', port: 80}, {name: 'b', port: 8080}]: Services by name
// and port number, the backendRefs of the routes a route experiment creates.
function parseBackends(name, value) {
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
function parseLabelSelector(name, value) {
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

// parseApiKind: empty, or a kind as xk6-kubernetes names it, Kind.group (NginxProxy.gateway.nginx.org);
// a core kind has no group (ConfigMap).
function parseApiKind(name, value) {
  const text = String(value).trim();
  if (text !== '' && !/^[A-Z][A-Za-z0-9]{0,62}(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(text)) {
    fail(name, value, 'expected empty or a kind and its API group, e.g. NginxProxy.gateway.nginx.org');
  }
  return text;
}

// parseFieldPath: an object's field as keys joined by dots, at least two (the first is spec), each
// a lowerCamel name, e.g. spec.kubernetes.deployment.replicas.
function parseFieldPath(name, value) {
  const text = String(value).trim();
  if (!/^spec(\.[a-z][A-Za-z0-9]{0,62}){1,8}$/.test(text)) {
    fail(name, value, 'expected a field under spec, its keys joined by dots, e.g. spec.replicas');
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

module.exports = {
  parseDuration,
  parsePositiveInt,
  parseCounts,
  parseOneOf,
  parseWords,
  parseBool,
  parseUrl,
  parsePath,
  parseChurnPattern,
  parseEnvironment,
  ROUTE_KINDS,
  parseRouteKind,
  parseBackends,
  parseOptionalLabel,
  parseDomain,
  parseLabelSelector,
  parseDnsName,
  parseApiKind,
  parseFieldPath,
  parseTestId,
};

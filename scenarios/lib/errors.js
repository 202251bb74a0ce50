// Error taxonomy: every failed request lands in exactly one class, counted by `bench_errors{class}`,
// with a finer `cause` tag under it. Classes follow the published tables (wrk's connect / read /
// timeout errors, plus HTTP status), and a failure is classed by what failed, not by k6's code
// alone (k6 gives a TLS handshake the server cut the code of a read error, 1000 or 1220):
//   connection  the request never reached the server: DNS, dial (refused, reset during connect),
//               TLS handshake of any kind, and any failure before the request was written
//   timeout     no complete response within BENCH_TIMEOUT: 1050
//   read        the connection broke after the request was written (EOF, reset), or the transport
//               replayed the request after its reused connection died (cause `replayed`, counted by
//               the k6/x/bench extension: wrk, the published tests' generator, counts those as read
//               errors; Go would re-send the GET and hide the failure)
//   http_5xx    a response with status 500-599 (k6 error_code 1500-1599)
//   http_4xx    a response with status 400-499 (k6 error_code 1400-1499)
//   other       anything else k6 reports (invalid URL 1020, HTTP/2 1600-1699, decompression 1701)
// k6 error codes: go.k6.io/k6 lib/netext/httpext/error_codes.go (the same in k6 v0.51 and v1).
import { errors } from './metrics.js';

// class -> its causes. The first cause of a class is its catch-all. Plain literals, nothing built in
// the init context: every VU runs this module's body, and a table of frozen tag objects built here
// cost about 60 KB per VU (ci/calibrate/README.md, "Memory per VU").
export const ERROR_CAUSES = {
  connection: ['other', 'refused', 'reset', 'tls_handshake', 'dns'],
  timeout: ['timeout'],
  read: ['other', 'reset', 'eof', 'replayed'],
  http_5xx: ['status'],
  http_4xx: ['status'],
  other: ['other'],
};
export const ERROR_CLASSES = Object.keys(ERROR_CAUSES);

// tagsFor(class, cause): one tag object per pair, made on a VU's first failure of that kind and
// reused after (no allocation per failure, none per VU until it fails).
const tagCache = {};
function tagsFor(cls, cause) {
  const key = `${cls}/${cause}`;
  return tagCache[key] || (tagCache[key] = { class: cls, cause });
}

const RESET = 1220;
const EOF = 1000;

// startsWithWord(text, word): text starts with word as a whole word (what /^word\b/ tests). No regex
// on this path: a VU's first regex builds its own RegExp machinery, about 16 KB of memory, and a
// stall makes every VU fail at once (ci/calibrate/README.md, "Memory per VU").
function startsWithWord(text, word) {
  if (!text.startsWith(word)) return false;
  const c = text.charCodeAt(word.length); // NaN past the end
  const wordChar = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
  return !wordChar;
}

// classifyError(status, errorCode, message, written, tls) -> {class, cause}, or null for a success.
// message: k6's error text ("dial: connection reset by peer"); written: whether the request was
// written to a connection (k6 times `sending` and `waiting` only after that); tls: an https target.
export function classifyError(status, errorCode, message, written, tls) {
  if (status >= 500 && status <= 599) return { class: 'http_5xx', cause: 'status' };
  if (status >= 400 && status <= 499) return { class: 'http_4xx', cause: 'status' };
  if (!errorCode) return status > 0 ? null : { class: 'other', cause: 'other' };
  if (errorCode === 1050) return { class: 'timeout', cause: 'timeout' };
  if (errorCode >= 1100 && errorCode <= 1111) return { class: 'connection', cause: 'dns' };
  if (errorCode === 1212) return { class: 'connection', cause: 'refused' };
  if (errorCode >= 1210 && errorCode <= 1213) return { class: 'connection', cause: 'other' };
  if (errorCode >= 1300 && errorCode <= 1399) return { class: 'connection', cause: 'tls_handshake' };
  const broken = errorCode === EOF || (errorCode >= 1200 && errorCode <= 1202) || errorCode === RESET;
  if (!broken) return { class: 'other', cause: 'other' };
  const text = String(message || '');
  if (startsWithWord(text, 'dial')) return { class: 'connection', cause: errorCode === RESET ? 'reset' : 'other' };
  // Nothing written: the connection failed on the way up; over TLS that is the handshake.
  if (!written) return { class: 'connection', cause: tls ? 'tls_handshake' : errorCode === RESET ? 'reset' : 'other' };
  if (errorCode === RESET) return { class: 'read', cause: 'reset' };
  if (errorCode === EOF) return { class: 'read', cause: 'eof' };
  return { class: 'read', cause: 'other' };
}

// countError(res, extraTags) classifies a k6 response and adds 1 to bench_errors if it failed.
// Returns the class or null. Hot path: a successful response costs one property read. Reading a
// field of k6's Go response object goes through reflection (about 1% of a request's CPU each, seen
// in a pprof of static.js); k6 sets error_code for every failure, 4xx/5xx included (1400-1599),
// so error_code 0 is a success, and the rest is read only for failures.
export function countError(res, extraTags) {
  const errorCode = res.error_code;
  if (!errorCode) return null;
  const timings = res.timings;
  const written = timings.sending > 0 || timings.waiting > 0;
  const found = classifyError(res.status, errorCode, res.error, written,
    String(res.url).slice(0, 6).toLowerCase() === 'https:');
  if (found !== null) {
    const tags = tagsFor(found.class, found.cause);
    errors.add(1, extraTags ? Object.assign({}, tags, extraTags) : tags);
  }
  return found && found.class;
}

// startErrorSeries(): adds 0 to every class and cause, so that each has a series in Prometheus from
// the start of a run (a class that never happens reads 0, not "no data"). Called from every
// setup() (checkTarget, load.js): untagged by role, it never counts in the summary.
export function startErrorSeries() {
  for (const cls of ERROR_CLASSES) for (const cause of ERROR_CAUSES[cls]) errors.add(0, tagsFor(cls, cause));
}

// Error taxonomy: every failed request lands in exactly one class, counted by `bench_errors{class}`.
// Classes follow the published tables (wrk's connect / read / timeout errors, plus HTTP status):
//   connection  the request never reached the server: DNS 1100-1111, dial 1210-1213, TLS 1300-1399
//   timeout     no complete response within BENCH_TIMEOUT: 1050
//   read        the connection broke after it was made: 1000, 1200-1202, 1220
//   http_5xx    a response with status 500-599 (k6 error_code 1500-1599)
//   http_4xx    a response with status 400-499 (k6 error_code 1400-1499)
//   other       anything else k6 reports (invalid URL 1020, HTTP/2 1600-1699, decompression 1701)
// k6 error codes: go.k6.io/k6 lib/netext/httpext/error_codes.go (the same in k6 v0.51 and v1).
import { errors } from './metrics.js';

export const ERROR_CLASSES = Object.freeze(['connection', 'timeout', 'read', 'http_5xx', 'http_4xx', 'other']);

// One frozen tag object per class: no allocation on the hot path.
const CLASS_TAGS = Object.freeze(Object.fromEntries(ERROR_CLASSES.map((c) => [c, Object.freeze({ class: c })])));

// classifyError(status, errorCode) -> class name, or null for a successful response.
export function classifyError(status, errorCode) {
  if (status >= 500 && status <= 599) return 'http_5xx';
  if (status >= 400 && status <= 499) return 'http_4xx';
  if (!errorCode) return status > 0 ? null : 'other';
  if (errorCode === 1050) return 'timeout';
  if ((errorCode >= 1100 && errorCode <= 1111) || (errorCode >= 1210 && errorCode <= 1213)
    || (errorCode >= 1300 && errorCode <= 1399)) return 'connection';
  if (errorCode === 1000 || (errorCode >= 1200 && errorCode <= 1202) || errorCode === 1220) return 'read';
  return 'other';
}

// countError(res, extraTags) classifies a k6 response and adds 1 to bench_errors if it failed.
// Returns the class or null. Hot path: a successful response costs one property read. Reading a
// field of k6's Go response object goes through reflection (about 1% of a request's CPU each, seen
// in a pprof of static.js); k6 sets error_code for every failure, 4xx/5xx included (1400-1599),
// so error_code 0 is a success and status need not be read.
export function countError(res, extraTags) {
  const errorCode = res.error_code;
  if (!errorCode) return null;
  const cls = classifyError(res.status, errorCode);
  if (cls !== null) {
    errors.add(1, extraTags ? Object.assign({ class: cls }, extraTags) : CLASS_TAGS[cls]);
  }
  return cls;
}

// startErrorSeries(): adds 0 to every class, so that each class has a series in Prometheus from
// the start of a run (a class that never happens reads 0, not "no data"). Called from every
// setup() (checkTarget, load.js): untagged by role, it never counts in the summary.
export function startErrorSeries() {
  for (const cls of ERROR_CLASSES) errors.add(0, CLASS_TAGS[cls]);
}

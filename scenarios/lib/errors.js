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
// k6 error codes: go.k6.io/k6 lib/netext/httpext/error_codes.go (the same in k6 v0.51 and v1.8).
// The rules are Go, in bench's k6 extension (scenarios/runner/xk6-bench/classify.go): a load request is sent and
// classed there (request.js), and countError below asks it for responses of k6's http module. This
// module holds the classes and causes (copy of scenarios/contract.json); the request path does not
// load it.
'use strict';
const bench = require('k6/x/bench');
const { errors } = require('./metrics.js');

// class -> its causes. The first cause of a class is its catch-all. Plain literals, nothing built in
// the init context: every VU runs this module's body, and a table of frozen tag objects built here
// cost about 60 KB per VU (scenarios/calibrate/README.md, "Memory per VU").
const ERROR_CAUSES = {
  connection: ['other', 'refused', 'reset', 'tls_handshake', 'dns'],
  timeout: ['timeout'],
  read: ['other', 'reset', 'eof', 'replayed'],
  http_5xx: ['status'],
  http_4xx: ['status'],
  other: ['other'],
};
const ERROR_CLASSES = Object.keys(ERROR_CAUSES);

// tagsFor(class, cause): one tag object per pair, made on a VU's first failure of that kind and
// reused after (no allocation per failure, none per VU until it fails).
const tagCache = {};
function tagsFor(cls, cause) {
  const key = `${cls}/${cause}`;
  return tagCache[key] || (tagCache[key] = { class: cls, cause });
}

// classifyError(status, errorCode, message, written, tls) -> {class, cause}, or null for a success.
// message: k6's error text ("dial: connection reset by peer"); written: whether the request was
// written to a connection (k6 times `sending` and `waiting` only after that); tls: an https target.
function classifyError(status, errorCode, message, written, tls) {
  const found = bench.classify(status, errorCode, String(message || ''), written, tls);
  return found === null ? null : { class: found[0], cause: found[1] };
}

// countError(res, extraTags) classifies a response of k6's http module and adds 1 to bench_errors
// if it failed. Returns the class or null. (Load requests are counted in Go: request.js hit.)
function countError(res, extraTags) {
  const errorCode = res.error_code;
  if (!errorCode) return null;
  const timings = res.timings;
  const found = classifyError(res.status, errorCode, res.error, timings.sending > 0 || timings.waiting > 0,
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
function startErrorSeries() {
  for (const cls of ERROR_CLASSES) for (const cause of ERROR_CAUSES[cls]) errors.add(0, tagsFor(cls, cause));
}

module.exports = {
  ERROR_CAUSES,
  ERROR_CLASSES,
  classifyError,
  countError,
  startErrorSeries,
};

// End-of-test summary, as entry scripts use it: thresholds for the sub-metrics it reads, the report
// that describes the run, and handleSummary. The writer (summary-writer.js: the published-style table
// and summary.json, schema bench.summary/v1) is loaded in VU 0 only: k6 builds options and runs setup,
// teardown and handleSummary there, while load, churn and lag VUs never call it. goja keeps every
// function a module defines alive in every VU that imports it (about 0.75 KB each), so this keeps
// the writer's out of each of the thousands of load VUs (scenarios/calibrate/README.md, "Memory per VU").
//
// A report describes the run: {scenario, cfg, targetUrl, path, keepalive, rateTarget, durationMs,
// churnPattern (string or null), parts: [{name, scenario, rateTarget, durationMs}] for by_path,
// steps: parts that get sub-metrics but no by_path entry (max-rps), extend(data, summary): optional
// hook for experiment-specific keys}.
'use strict';

const writer = __VU === 0 ? require('./summary-writer.js') : null;

// summaryThresholds(report, thresholds): adds the sub-metrics the summary reads (VU 0; options are
// read from VU 0 only, so other VUs get thresholds unchanged).
function summaryThresholds(report, thresholds) {
  return writer ? writer.summaryThresholds(report, thresholds) : thresholds;
}

// singleTargetReport: the report of an experiment with one target and one load scenario.
function singleTargetReport(scenario, cfg, extra) {
  return Object.assign({
    scenario,
    cfg,
    targetUrl: cfg.targetUrl,
    path: cfg.path,
    keepalive: cfg.keepalive,
    rateTarget: cfg.rate,
    durationMs: cfg.durationMs,
    churnPattern: null,
    parts: [],
  }, extra || {});
}

// makeHandleSummary(report): the entry script's handleSummary (k6 calls it in VU 0).
function makeHandleSummary(report) {
  return writer ? writer.makeHandleSummary(report) : undefined;
}

// Readers an experiment's report.extend(data, summary) hook uses (it runs in handleSummary, VU 0).
const requestsFor = (...args) => writer.requestsFor(...args);
const latencyFrom = (...args) => writer.latencyFrom(...args);
const errorsFor = (...args) => writer.errorsFor(...args);

module.exports = {
  summaryThresholds,
  singleTargetReport,
  makeHandleSummary,
  requestsFor,
  latencyFrom,
  errorsFor,
};

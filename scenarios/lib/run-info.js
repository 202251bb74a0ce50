// bench_run_info: what the run was asked to do, written once per runner by setup() (checkTarget,
// load.js) as a gauge of 1 whose tags are the settings. Prometheus then holds the run's settings
// beside its measurements, and `make results` reads them from there (benchreport/results.py):
// nothing to re-read from the chart values or the TestRun, nothing to paste. Only VU 0 loads this
// module (a metric object costs every VU that loads it memory).
'use strict';
const { Gauge } = require('k6/metrics');
const bench = require('k6/x/bench');
const { runnerShare } = require('./segment.js');

const runInfo = new Gauge('bench_run_info');

// recordRunInfo(cfg, targetUrl): the settings as tags (strings; an unset one is left out).
function recordRunInfo(cfg, targetUrl) {
  const tags = {
    rate: cfg.rate, duration_s: cfg.durationMs / 1000, warmup_s: cfg.warmupMs / 1000, connections: cfg.connections,
    timeout_s: cfg.timeoutMs / 1000, keepalive: cfg.keepalive, target_url: targetUrl, path: cfg.path,
    runners: Math.round(1 / runnerShare()),
    // the k6 release the runner is built from: runs on different releases are not alike
    k6_version: bench.k6Version() || undefined,
  };
  for (const k of Object.keys(tags)) {
    if (tags[k] === undefined || tags[k] === null || Number.isNaN(tags[k])) delete tags[k];
    else tags[k] = String(tags[k]);
  }
  runInfo.add(1, tags);
}

module.exports = {
  runInfo,
  recordRunInfo,
};

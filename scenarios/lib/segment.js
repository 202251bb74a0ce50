// runnerShare(): this runner's share of the test's load (k6-operator parallelism runs each runner
// on an execution segment, e.g. "1/3:2/3"); 1 when the test is not split. Used by the summary
// writer (the runner's own share of the rate) and run-info.js (how many runners share the run).
'use strict';
const exec = require('k6/execution');

function runnerShare() {
  let segment = '';
  try {
    segment = String(exec.test.options.executionSegment || '');
  } catch (e) {
    segment = '';
  }
  const m = /^([0-9/.]+):([0-9/.]+)$/.exec(segment.trim());
  if (!m) return 1;
  const frac = (t) => (t.includes('/') ? Number(t.split('/')[0]) / Number(t.split('/')[1]) : Number(t));
  const share = frac(m[2]) - frac(m[1]);
  return share > 0 && share <= 1 ? share : 1;
}

module.exports = {
  runnerShare,
};

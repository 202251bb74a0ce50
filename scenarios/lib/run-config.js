// The run's configuration, as entry scripts take it: validated once, in VU 0, and read by every
// other VU. k6 instantiates VU 0 first in every k6 process (options; then setup, teardown and
// handleSummary), so a bad value still stops the run at init, before any load, with config.js's
// message. The other VUs read VU 0's validated values from a SharedArray (held once per process)
// instead of loading config.js: its parsers and regex literals cost each VU about 40 KB of memory
// (scenarios/calibrate/README.md, "Memory per VU").
'use strict';
const { SharedArray } = require('k6/data');

const config = __VU === 0 ? require('./config.js') : null;

// runConfig(env, overrides, settings): loadConfig(env, overrides, settings) (config.js) of this run,
// the same deep-frozen object in every VU: the script's own settings too (cfg.settings), so no VU but
// VU 0 needs a parser.
// This VU's handle on the shared copy (k6 makes a SharedArray in the init stage only).
let shared = null;

function runConfig(env, overrides, settings) {
  shared = new SharedArray('bench-run-config', () => {
    if (!config) throw new Error('bench: the configuration must be validated in VU 0 first');
    return [config.loadConfig(env, overrides, settings)];
  });
  return shared[0];
}

// runConfigAgain(): what runConfig() returned, read again from the shared copy at run time. For
// code that runs in one VU only (the churn VU): a closure that kept runConfig()'s result would keep
// every VU's parsed copy alive (about 13 KB a VU, scenarios/calibrate/README.md, "Memory per VU").
function runConfigAgain() {
  return shared[0];
}

module.exports = {
  runConfig,
  runConfigAgain,
};

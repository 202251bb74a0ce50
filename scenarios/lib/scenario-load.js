// Load VUs of an entry script whose scenarios hit different targets one after the other
// (keepalive, paths). In a module of its own: k6/execution costs each VU about 6 KB of memory, and
// the single-target experiments' load VUs do without it.
'use strict';
const exec = require('k6/execution');
const { hit } = require('./request.js');

// loadByScenario(targets): {load} hitting targets[the VU's scenario name] (request.js target). A
// VU of the runner_lag scenario finds no target there and takes a lag sample (request.js hit).
function loadByScenario(targets) {
  return {
    load() {
      hit(targets[exec.scenario.name]);
    },
  };
}

module.exports = {
  loadByScenario,
};

// parseDuration, alone in its module: the churn VU parses the durations a churn function gives
// (t.hold('15s'), churn-context.js), and any VU of a churn run may be that VU, so every one loads
// this module; one function costs each VU far less than all the parsers (parse.js, scenarios/calibrate/
// README.md, "Memory per VU").
'use strict';

// The grammar of scenarios/contract.json `durations` (k6's own durations, no bare number: the contract
// says why), copied literally because a VU must not parse the contract; scenarios/tests/unit.js
// checks durationMs against the contract's examples.
const DURATION = /^([0-9]+(\.[0-9]+)?(h|ms|us|m|s))+$/;
const DURATION_UNITS_MS = { h: 3600000, m: 60000, s: 1000, ms: 1, us: 0.001 };

// durationMs('1m30s') -> 90000: the milliseconds of a duration (0s is 0), NaN for anything else. The
// sum is rounded to the nanosecond, as k6's Go durations hold it, so '1.1m' is 66000, not
// 66000.00000000001.
function durationMs(text) {
  if (typeof text !== 'string' || !DURATION.test(text)) return NaN;
  const term = /([0-9.]+)(h|ms|us|m|s)/g;
  let ms = 0;
  let match;
  while ((match = term.exec(text)) !== null) ms += Number(match[1]) * DURATION_UNITS_MS[match[2]];
  return Math.round(ms * 1e6) / 1e6;
}

// parseDuration(name, '1m30s') -> 90000 (milliseconds): a positive duration, else an Error naming
// the variable and the value.
function parseDuration(name, value) {
  const ms = durationMs(String(value));
  if (!(ms > 0)) {
    throw new Error(`invalid ${name}=${JSON.stringify(value)}: expected a positive duration like 500ms, 12s, 1m30s `
      + 'or 2h (units h, m, s, ms, us; a bare number has no unit)');
  }
  return ms;
}

module.exports = {
  durationMs,
  parseDuration,
};

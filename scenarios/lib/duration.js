// parseDuration, alone in its module: the churn VU parses the durations a churn function gives
// (t.hold('15s'), churn-context.js), and any VU of a churn run may be that VU, so every one loads
// this module; one function costs each VU far less than all the parsers (parse.js, scenarios/calibrate/
// README.md, "Memory per VU").
'use strict';

const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60000, h: 3600000 };

// parseDuration('1m30s') -> 90000 (milliseconds). Units: ms, s, m, h; a bare number is seconds.
function parseDuration(name, value) {
  const text = String(value).trim();
  const allowed = 'expected a positive duration like 500ms, 12s, 1m30s or 2h';
  const fail = () => {
    throw new Error(`invalid ${name}=${JSON.stringify(value)}: ${allowed}`);
  };
  if (/^\d+(\.\d+)?$/.test(text)) {
    const ms = Number(text) * 1000;
    if (ms <= 0) fail();
    return ms;
  }
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let ms = 0;
  let consumed = 0;
  let match;
  while ((match = re.exec(text)) !== null) {
    ms += Number(match[1]) * DURATION_UNITS_MS[match[2]];
    consumed = re.lastIndex;
  }
  if (text === '' || consumed !== text.length || ms <= 0) fail();
  return ms;
}

module.exports = {
  parseDuration,
};

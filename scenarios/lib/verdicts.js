// The rate-held rule every verdict shares (scenarios/contract.json verdicts.rateHeldShare; a VU
// keeps this literal copy, parity: ci/test/contract.py k6-verdicts): a run, step or part held its
// target when it dropped no iteration and achieved at least this share of the target rate.
'use strict';
const RATE_HELD_SHARE = 0.95;

// rateHeld(requests): {rate_achieved, rate_target} reached the share (dropped iterations apart).
function rateHeld(requests) {
  return requests.rate_achieved >= RATE_HELD_SHARE * requests.rate_target;
}

module.exports = {
  RATE_HELD_SHARE,
  rateHeld,
};

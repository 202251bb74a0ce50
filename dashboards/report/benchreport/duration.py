"""The one duration parser of bench's Python (the report's --duration and --budget, the dashboard
tools' --step and --rate-interval): k6's (Go's) durations, terms of a number and a unit summed,
'1m30s', '500ms', '1.5h', '250us'. It lives in benchreport because benchdashboards already imports
benchreport (the Prometheus client), never the other way. The JavaScript twin is
scenarios/lib/duration.js."""
import re
from fractions import Fraction

# A unit's length in microseconds: whole numbers, so '0.1s' in ms is exactly 100 (Fraction below).
UNITS_US = {"h": 3_600_000_000, "m": 60_000_000, "s": 1_000_000, "ms": 1_000, "us": 1}
# ms before m: the longer unit first, so '5ms' is never read as 5 m and a stray 's'.
_TERM = re.compile(r"(\d+(?:\.\d+)?)(h|ms|us|m|s)")
_BARE = re.compile(r"\d+(?:\.\d+)?")


class DurationError(ValueError):
    """Text that is not a duration; the message names it and what is allowed."""


def parse_duration(text, unit="s", bare=None):
    """A duration in `unit` (a key of UNITS_US) as a float: '1m30s' -> 90.0 in s, 90000.0 in ms.
    `bare` is the unit a number without one means (a caller's documented interface, e.g. 'ms' for
    a budget); None refuses it. A number (int or float, not text) is already in `unit`. Negative
    durations and signs are refused; zero is a duration."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if text < 0:
            raise DurationError(_refusal(text, bare))
        return float(text)
    if not isinstance(text, str):
        raise DurationError(_refusal(text, bare))
    if bare is not None and _BARE.fullmatch(text):
        return float(Fraction(text) * UNITS_US[bare] / UNITS_US[unit])
    total, end = Fraction(0), 0
    for m in _TERM.finditer(text):
        if m.start() != end:  # something between two terms
            break
        total += Fraction(m.group(1)) * UNITS_US[m.group(2)]
        end = m.end()
    if not text or end != len(text):
        raise DurationError(_refusal(text, bare))
    return float(total / UNITS_US[unit])


def _refusal(text, bare):
    allowed = "a duration like 1m30s, 500ms, 1.5h or 250us (units h, m, s, ms, us)"
    if bare is not None:
        allowed += f", or a bare number of {bare}"
    return f"{text!r} is not {allowed}"

"""The one duration parser of bench's Python (the report's --duration, --budget and --attribution-window,
the dashboard tools' --step and --rate-interval). Its grammar is scenarios/contract.json's `durations`
(k6's durations: terms of a number and a unit summed, '1m30s', '500ms', '1.5h', '250us'; no bare
number): the pattern and the units are read from there, so this module copies neither. It lives in
benchreport because benchdashboards already imports benchreport (the Prometheus client), never the
other way. The JavaScript twin is scenarios/lib/duration.js."""
import re
from fractions import Fraction

from .summary import CONTRACT

GRAMMAR = CONTRACT["durations"]
_WHOLE = re.compile(GRAMMAR["pattern"])
# A unit's length in ms, exact: Fraction of the decimal text, so '0.1s' in ms is exactly 100 and
# 'us' exactly 1/1000 (a float 0.001 is not).
UNITS_MS = {unit: Fraction(str(ms)) for unit, ms in GRAMMAR["unitsMs"].items()}
# One term, the longer unit first, so '5ms' is 5 ms, never 5 m and a stray 's'; the whole text has
# matched _WHOLE before this splits it.
_TERM = re.compile(r"([0-9.]+)(" + "|".join(sorted(UNITS_MS, key=len, reverse=True)) + ")")
ALLOWED = f"a duration like 1m30s, 500ms, 1.5h or 250us (units {', '.join(UNITS_MS)}; a bare number has no unit)"


class DurationError(ValueError):
    """Text that is not a duration; the message names it and what is allowed."""


def parse_duration(text, unit="s"):
    """A duration in `unit` (a key of UNITS_MS) as a float: '1m30s' -> 90.0 in s, 90000.0 in ms.
    Zero is a duration; a caller that needs a positive one refuses it."""
    if not isinstance(text, str) or not _WHOLE.fullmatch(text):
        raise DurationError(f"{text!r} is not {ALLOWED}")
    total = sum(Fraction(number) * UNITS_MS[u] for number, u in _TERM.findall(text))
    return float(total / UNITS_MS[unit])

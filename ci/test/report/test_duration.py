"""benchreport.duration, the one Python duration parser: what it accepts, in which unit, and what it
refuses with which message. Its callers' own messages are checked where they are used (test_report's
--duration and --budget cases, the dashboards part's check.py arguments)."""
import pathlib
import re

import pytest

from benchreport.duration import DurationError, parse_duration
from benchreport.results import SettingsError, parse_duration_s
from benchreport.verdict import BudgetError, parse_budget
from benchdashboards.queries import UsageError, parse_duration as whole_seconds

ALLOWED = "a duration like 1m30s, 500ms, 1.5h or 250us (units h, m, s, ms, us)"

# (text, unit, bare, value in unit)
ACCEPTED = [
    ("180s", "s", None, 180.0),
    ("3m", "s", None, 180.0),
    ("1m30s", "s", None, 90.0),
    ("2h", "s", None, 7200.0),
    ("1.5h", "s", None, 5400.0),
    ("500ms", "s", None, 0.5),
    ("1h2m3s4ms", "s", None, 3723.004),
    ("30s1m", "s", None, 90.0),        # any order, summed, as Go's time.ParseDuration
    ("0s", "s", None, 0.0),             # zero is a duration; a caller refuses it when it must
    ("100ms", "ms", None, 100.0),
    ("0.1s", "ms", None, 100.0),
    ("1.1m", "s", None, 66.0),          # exact: in floats 66.00000000000001, not whole seconds for --step
    ("250us", "ms", None, 0.25),
    ("1.5ms", "ms", None, 1.5),
    ("100", "ms", "ms", 100.0),         # a budget's bare number: milliseconds
    ("180", "s", "s", 180.0),           # BENCH_DURATION's bare number: seconds
    ("2.5", "ms", "s", 2500.0),
    (12, "s", None, 12.0),              # a number is already in the unit
    (0.5, "ms", None, 0.5),
]

# (value, bare): refused, each with the same message naming the text and what is allowed
REFUSED = [
    ("", None), (None, None), ("soon", None), ("s", None), ("100", None),
    ("1 s", None), (" 1s", None), ("1s ", None), ("1s2", None), ("5m3", "s"),
    ("-1s", None), ("+1s", None), (".5s", None), ("1.s", None), ("1d", None), ("1ns", None),
    ("1S", None), ("1sec", None), ("1e3ms", None), ("1,5s", None), ("-5", "ms"), (-1, None), (True, None),
]


@pytest.mark.parametrize("text,unit,bare,want", ACCEPTED, ids=[f"{a[0]!r} in {a[1]}" for a in ACCEPTED])
def test_accepted(text, unit, bare, want):
    got = parse_duration(text, unit, bare=bare)
    assert got == want and type(got) is float


@pytest.mark.parametrize("text,bare", REFUSED, ids=[repr(r[0]) + ("" if r[1] is None else f" bare {r[1]}")
                                                    for r in REFUSED])
def test_refused_with_its_message(text, bare):
    with pytest.raises(DurationError) as e:
        parse_duration(text, "s", bare=bare)
    want = f"{text!r} is not {ALLOWED}" + ("" if bare is None else f", or a bare number of {bare}")
    assert str(e.value) == want


# Each caller: the unit and bare number its interface documents, its own message for a refusal.
CALLERS = [
    ("--duration 1m30s", lambda: parse_duration_s("1m30s", "--duration"), 90.0),
    ("--duration 180", lambda: parse_duration_s("180", "--duration"), 180.0),
    ("--budget 1m30s", lambda: parse_budget("p99=1m30s").limit, 90000.0),
    ("--budget 100", lambda: parse_budget("p99=100").limit, 100.0),
    ("--budget 250us", lambda: parse_budget("p99=250us").limit, 0.25),
    ("--step 1m30s", lambda: whole_seconds("1m30s", "--step"), 90),
    ("--step 1.5m", lambda: whole_seconds("1.5m", "--step"), 90),
    ("--step 1.1m", lambda: whole_seconds("1.1m", "--step"), 66),
]


@pytest.mark.parametrize("name,call,want", CALLERS, ids=[c[0] for c in CALLERS])
def test_caller_accepts(name, call, want):
    got = call()
    assert got == want and type(got) is type(want)


CALLER_REFUSALS = [
    ("--duration soon", lambda: parse_duration_s("soon", "--duration"), SettingsError,
     "--duration 'soon' is not a duration; expected e.g. 180s, 3m, 1m30s"),
    ("--budget fast", lambda: parse_budget("p99=fast"), BudgetError,
     "--budget 'p99=fast': 'fast' is not a duration; expected e.g. 100ms, 0.5s, 250us or 100 (ms)"),
    ("--step 500ms", lambda: whole_seconds("500ms", "--step"), UsageError,
     "--step '500ms' must be a duration like 15s, 1m or 2h"),
    ("--step 15", lambda: whole_seconds("15", "--step"), UsageError,
     "--step '15' must be a duration like 15s, 1m or 2h"),
]


@pytest.mark.parametrize("name,call,error,message", CALLER_REFUSALS, ids=[c[0] for c in CALLER_REFUSALS])
def test_caller_refuses_with_its_own_message(name, call, error, message):
    with pytest.raises(error) as e:
        call()
    assert str(e.value) == message


# ---- one parser: no other module of the product's Python reads duration units ----

ROOT = pathlib.Path(__file__).resolve().parents[3]
# a unit alternation like (us|ms|s|m) or (ms|s|m|h), or a unit class like [smh]
UNIT = r"(?:h|m|s|ms|us|ns|d)"
UNIT_PATTERN = re.compile(rf"\((?:\?:)?{UNIT}(?:\|{UNIT})+\)|\[[smhd]{{3,4}}\]")
# (module, pattern): the parser itself; parse_time's now-30m, a Grafana time with days, not a duration
ALLOWED_UNIT_PATTERNS = [("dashboards/generator/benchdashboards/queries.py", "[smhd]"),
                         ("dashboards/report/benchreport/duration.py", "(h|ms|us|m|s)")]


def unit_patterns(files):
    """(module, pattern) of every duration-unit pattern, once per module."""
    return sorted({(p, m.group(0)) for p, text in files.items() for m in UNIT_PATTERN.finditer(text)})


def test_no_other_duration_parser():
    files = {str(p.relative_to(ROOT)): p.read_text() for p in sorted(ROOT.glob("dashboards/**/*.py"))
             + sorted(ROOT.glob("scenarios/calibrate/**/*.py"))}
    assert unit_patterns(files) == ALLOWED_UNIT_PATTERNS


@pytest.mark.parametrize("planted,pattern", [('re.fullmatch(r"(\\d+)(us|ms|s|m)?", text)', "(us|ms|s|m)"),
                                             ('re.fullmatch(r"(\\d+)([smh])", t)', "[smh]"),
                                             ('r"(?:(ms|s|m|h))+"', "(ms|s|m|h)")])
def test_other_parser_check_fails_on_a_planted_one(planted, pattern):
    assert unit_patterns({"planted.py": planted}) == [("planted.py", pattern)]

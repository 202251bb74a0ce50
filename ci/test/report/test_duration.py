"""benchreport.duration, the one Python duration parser, against scenarios/contract.json `durations`,
the grammar and its table of examples every parser is tested against (the scenarios' in
scenarios/tests/unit.js, the chart's in ci/test/chart/test_durations.py): what it accepts, in which
unit, and what it refuses with which message; each caller's unit and message; no other parser."""
import json
import pathlib
import re

import pytest

from benchreport.duration import ALLOWED, DurationError, parse_duration
from benchreport.results import SettingsError, parse_duration_s
from benchreport.verdict import BudgetError, parse_budget
from benchdashboards.queries import UsageError, parse_duration as whole_seconds

ROOT = pathlib.Path(__file__).resolve().parents[3]
DURATIONS = json.loads((ROOT / "scenarios/contract.json").read_text())["durations"]
ACCEPTS = DURATIONS["examples"]["accepts"]
# The table's refusals, and what only Python can be given: values that are not text
REFUSES = DURATIONS["examples"]["refuses"] + [None, 12, 0.5, True]


@pytest.mark.parametrize("text,ms", ACCEPTS, ids=[a[0] for a in ACCEPTS])
def test_accepted_in_ms_and_s(text, ms):
    got = parse_duration(text, "ms"), parse_duration(text, "s")
    assert got == (ms, ms / 1000) and all(type(g) is float for g in got)


@pytest.mark.parametrize("text", REFUSES, ids=[repr(r) for r in REFUSES])
def test_refused_with_its_message(text):
    with pytest.raises(DurationError) as e:
        parse_duration(text, "s")
    assert str(e.value) == f"{text!r} is not {ALLOWED}"


def test_examples_use_every_unit():
    used = {re.sub(r"^[0-9.]+", "", text) for text, _ in ACCEPTS}
    assert set(DURATIONS["unitsMs"]) <= used


# Each caller: the unit its interface documents, its own message for a refusal.
CALLERS = [
    ("--duration 1m30s", lambda: parse_duration_s("1m30s", "--duration"), 90.0),
    ("--budget 1m30s", lambda: parse_budget("p99=1m30s").limit, 90000.0),
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
    ("--duration 180", lambda: parse_duration_s("180", "--duration"), SettingsError,
     "--duration '180' is not a duration; expected e.g. 180s, 3m, 1m30s"),
    ("--budget fast", lambda: parse_budget("p99=fast"), BudgetError,
     "--budget 'p99=fast': 'fast' is not a duration; expected e.g. 100ms, 0.5s, 250us or 1m30s (a bare number has no unit)"),
    ("--budget 100", lambda: parse_budget("p99=100"), BudgetError,
     "--budget 'p99=100': '100' is not a duration; expected e.g. 100ms, 0.5s, 250us or 1m30s (a bare number has no unit)"),
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

# a unit alternation like (us|ms|s|m) or (ms|s|m|h), or a unit class like [smh]
UNIT = r"(?:h|m|s|ms|us|ns|d)"
UNIT_PATTERN = re.compile(rf"\((?:\?:)?{UNIT}(?:\|{UNIT})+\)|\[[smhd]{{3,4}}\]")
# (module, pattern): parse_time's now-30m, a Grafana time with days, not a duration (the parser itself
# reads its units from the contract and writes none); the JavaScript twin's literal copy (a VU must
# not parse the contract; unit.js tests it against the contract's examples)
ALLOWED_UNIT_PATTERNS = [("dashboards/generator/benchdashboards/queries.py", "[smhd]"),
                         ("scenarios/lib/duration.js", "(h|ms|us|m|s)")]


def unit_patterns(files):
    """(module, pattern) of every duration-unit pattern, once per module."""
    return sorted({(p, m.group(0)) for p, text in files.items() for m in UNIT_PATTERN.finditer(text)})


def test_no_other_duration_parser():
    files = {str(p.relative_to(ROOT)): p.read_text() for p in sorted(ROOT.glob("dashboards/**/*.py"))
             + sorted(ROOT.glob("scenarios/calibrate/**/*.py"))
             + sorted(p for p in ROOT.glob("scenarios/**/*.js") if "tests" not in p.parts)}
    assert unit_patterns(files) == ALLOWED_UNIT_PATTERNS


@pytest.mark.parametrize("planted,pattern", [('re.fullmatch(r"(\\d+)(us|ms|s|m)?", text)', "(us|ms|s|m)"),
                                             ('re.fullmatch(r"(\\d+)([smh])", t)', "[smh]"),
                                             ('r"(?:(ms|s|m|h))+"', "(ms|s|m|h)")])
def test_other_parser_check_fails_on_a_planted_one(planted, pattern):
    assert unit_patterns({"planted.py": planted}) == [("planted.py", pattern)]

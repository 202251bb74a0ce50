"""The chart against scenarios/contract.json `durations`, the one duration grammar and its table of
examples (the scenarios' parser is tested against the same table in scenarios/tests/unit.js, the
report's in ci/test/report/test_duration.py): every duration key's schema pattern accepts exactly the
accepted examples, helm itself (its own JSON Schema validator) takes and refuses them through a key,
bench.durationMs reads each accepted one as its milliseconds, and no key keeps a duration pattern of
its own."""
import concurrent.futures
import json
import math
import re

import pytest
import yaml

from conftest import CHART_SRC, ROOT

DURATIONS = json.loads((ROOT / "scenarios/contract.json").read_text())["durations"]
ACCEPTS = DURATIONS["examples"]["accepts"]
REFUSES = DURATIONS["examples"]["refuses"]
SCHEMA = json.loads((CHART_SRC / "values.schema.json").read_text())
VALUES_YAML = (CHART_SRC / "values.yaml").read_text()
HELPER = (CHART_SRC / "templates/loadtest/_connections.tpl").read_text()


def duration_keys(schema, path=""):
    """{dotted key: pattern} of every key whose pattern values.yaml writes with <duration>, found as
    the generator wrote it: the contract's pattern between the key's own anchors."""
    found = {}
    for name, sub in schema.get("properties", {}).items():
        key = f"{path}.{name}" if path else name
        if DURATIONS["pattern"][1:-1] in sub.get("pattern", ""):
            found[key] = sub["pattern"]
        found.update(duration_keys(sub, key))
    return found


KEYS = duration_keys(SCHEMA)


def test_duration_keys_found():
    """Every `<duration>` of values.yaml became a key's pattern (none lost on the way)."""
    assert len(KEYS) == VALUES_YAML.count("'^(<duration>)?$'") + 1 > 10, sorted(KEYS)  # + the churn pattern
    assert "loadtest.duration" in KEYS and "loadtest.churn.pattern" in KEYS


def matches(pattern, text):
    """JSON Schema's (ECMA-262) search: `$` without the m flag ends the text, where Python's also
    matches before a final newline, so the anchors become \\A and \\Z."""
    return re.search(r"\A" + pattern[1:-1] + r"\Z", text) is not None if pattern[0] + pattern[-1] == "^$" else None


@pytest.mark.parametrize("key", sorted(k for k in KEYS if k != "loadtest.churn.pattern"))
def test_key_pattern_takes_exactly_the_grammar(key):
    """An optional key (empty = the scenario's default) takes the empty text besides the grammar."""
    wrong = [t for t, _ in ACCEPTS if not matches(KEYS[key], t)] + [t for t in REFUSES if t and matches(KEYS[key], t)]
    assert wrong == [] and matches(KEYS[key], "") is True, f"{key}: {KEYS[key]} is wrong about {wrong}"


def test_churn_pattern_holds_take_exactly_the_grammar():
    pattern = KEYS["loadtest.churn.pattern"]
    wrong = ([t for t, _ in ACCEPTS if not matches(pattern, f"5:{t},7:10s")]
             + [t for t in REFUSES if matches(pattern, f"5:{t},7:10s")])
    assert wrong == [], f"loadtest.churn.pattern: {pattern} is wrong about the holds {wrong}"


# A pattern of units that is not the grammar's: an alternation like (ms|s|m|h) or a class like [smh].
UNIT = r"(?:h|m|s|ms|us|ns|d)"
UNIT_PATTERN = re.compile(rf"\((?:\?:)?{UNIT}(?:\|{UNIT})+\)|\[[smhd]{{3,4}}\]")
# The scrape intervals are Prometheus durations (prometheus-operator's: whole numbers), not k6's.
PROMETHEUS_INTERVALS = ["monitoring.controllerPodMonitor.interval", "monitoring.podMonitors[].interval"]


def test_no_duration_pattern_of_its_own():
    """values.yaml writes every k6 duration as <duration>: a unit list of its own is a parser that drifts."""
    own = [line.strip() for line in VALUES_YAML.splitlines() if UNIT_PATTERN.search(line)]
    assert own == ["# @schema {pattern: '^([0-9]+(ms|s|m|h))+$'}", "#     interval: {type: string, pattern: '^([0-9]+(ms|s|m|h))+$'}"], (
        f"duration patterns besides <duration> and the Prometheus intervals {PROMETHEUS_INTERVALS}: {own}")


def test_helper_copies_the_contract():
    """bench.durationMs keeps the contract's units and term (copies: the template does not read the contract)."""
    units = dict(re.findall(r'"([a-z]+)" ([0-9.]+)', re.search(r"\$units := dict (.*?) }}", HELPER)[1]))
    term = re.search(r'regexFindAll "(.*?)"', HELPER)[1].replace("\\\\", "\\")
    assert {u: float(ms) for u, ms in units.items()} == {u: float(ms) for u, ms in DURATIONS["unitsMs"].items()}
    assert term == DURATIONS["pattern"][2:-3]


# helm renders the table through loadtest.timeout: its schema validator judges the text and
# bench.durationMs turns it into the VU ceiling, rate x timeout rounded up (1 connection, so the
# ceiling is the product; the rate keeps it under the 100000 cap and distinct per example).
MEMORY = {"resources": {"requests": {"memory": "64Gi"}, "limits": {"memory": "64Gi"}}}  # room for 100000 VUs


def ceiling(ms):
    rate = 1000 if ms <= 100000 else 1
    return rate, min(100000, max(1, math.ceil(rate * ms / 1000)))


def render_all(helm, cases):
    def render(i, case):
        text, rate = case
        f = helm.work / f"durations-v{helm.major}-{i}.json"  # JSON: the text stays text, spaces and all
        f.write_text(json.dumps({"loadtest": {"timeout": text, "rate": rate, "connections": 1, "runner": MEMORY}}))
        return helm.template("-f", helm.runner_values, "-f", f)
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(render, range(len(cases)), cases))


def max_connections(rendered):
    for doc in yaml.safe_load_all(rendered):
        if doc and doc.get("kind") == "TestRun":
            return next(int(e["value"]) for e in doc["spec"]["runner"]["env"] if e["name"] == "BENCH_MAX_CONNECTIONS")
    return None


def test_helm_takes_the_table(helm):
    """Each accepted example renders with its milliseconds (zero: refused as not positive, the
    scenarios' rule); each refused one is refused naming the key."""
    cases = [(t, ceiling(ms)[0]) for t, ms in ACCEPTS] + [(t, 1000) for t in REFUSES if t]
    results = render_all(helm, cases)
    wrong = []
    for (text, ms), r in zip(ACCEPTS, results):
        if ms == 0:
            if 'loadtest.timeout "%s": expected a positive duration' % text not in r.stderr:
                wrong.append(f"{text!r}: not refused as zero: {r.stderr.strip()[-300:]}")
        elif r.returncode != 0:
            wrong.append(f"{text!r}: refused: {r.stderr.strip()[-300:]}")
        elif max_connections(r.stdout) != ceiling(ms)[1]:
            wrong.append(f"{text!r}: BENCH_MAX_CONNECTIONS {max_connections(r.stdout)}, want {ceiling(ms)[1]} ({ms} ms)")
    for text, r in zip([t for t in REFUSES if t], results[len(ACCEPTS):]):
        if r.returncode == 0 or "timeout" not in r.stderr:
            wrong.append(f"{text!r}: {'rendered' if r.returncode == 0 else 'refused without naming the key'}")
    assert wrong == [], "\n".join(wrong)

"""Bad values are refused at `helm template` time with a message naming the value and what is allowed.

Each charts/bench/tests/bad-values/*.yaml file starts with a "# expect: <regular expression>" line:
the message its rejection must contain.
"""
import re

import pytest

from conftest import CHART_SRC

BAD_VALUES = sorted((CHART_SRC / "tests" / "bad-values").glob("*.yaml"))
# The suite's files are the cases: an empty or missing folder stops the collection.
assert BAD_VALUES, f"no bad-values files in {CHART_SRC / 'tests' / 'bad-values'}"


def expected_message(path):
    for line in path.read_text().splitlines():
        if line.startswith("# expect: "):
            return line.split(": ", 1)[1]
    return None


@pytest.mark.parametrize("bad", BAD_VALUES, ids=lambda p: p.name)
def test_refuses_bad_values(helm, bad):
    expect = expected_message(bad)
    assert expect, f"{bad.name} has no '# expect:' line"
    result = helm.template("-f", helm.runner_values, "-f", helm.chart / "tests" / "bad-values" / bad.name)
    assert result.returncode != 0, f"{bad.name} rendered without error"
    assert re.search(expect, result.stderr), f"no /{expect}/ in:\n{result.stderr}"

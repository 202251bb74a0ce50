"""Bad values are refused at `helm template` time with a message naming the value and what is allowed.

Each charts/bench/tests/bad-values/*.yaml file starts with a "# expect: <regular expression>" line:
the message its rejection must contain.
"""
import re

import pytest
import yaml

from conftest import CHART_SRC, KUBE_VERSION, NAMESPACE, RELEASE

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


# Hostile values (issue 26): one table, charts/bench/tests/hostile-values.yaml, a row per value and
# sink (the k6-operator initializer's shell, YAML printed into a manifest, tpl, a run that would fail
# in the cluster), each refused with a message naming the key.
HOSTILE_TABLE = CHART_SRC / "tests" / "hostile-values.yaml"
HOSTILE = yaml.safe_load(HOSTILE_TABLE.read_text())
assert HOSTILE, f"no rows in {HOSTILE_TABLE}"


def test_hostile_table_is_well_formed():
    ids = [row["id"] for row in HOSTILE]
    assert len(ids) == len(set(ids)), "duplicate ids in hostile-values.yaml"
    for row in HOSTILE:
        assert set(row) <= {"id", "sink", "values", "release", "expect"}, row["id"]
        assert row["sink"] in ("shell", "yaml", "template", "run"), row["id"]
        assert row["id"].startswith(row["sink"] + "-"), row["id"]
        re.compile(row["expect"])


@pytest.mark.parametrize("row", HOSTILE, ids=lambda row: row["id"])
def test_refuses_hostile_values(helm, row, tmp_path):
    values = tmp_path / "values.yaml"
    values.write_text(row["values"])
    result = helm("template", row.get("release", RELEASE), helm.chart, "-n", NAMESPACE,
                  "--kube-version", KUBE_VERSION, "-f", helm.runner_values, "-f", values)
    assert result.returncode != 0, f"{row['id']} rendered without error:\n{result.stdout[-3000:]}"
    assert re.search(row["expect"], result.stderr), f"no /{row['expect']}/ in:\n{result.stderr}"

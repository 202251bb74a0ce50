"""Bad values are refused at `helm template` time with a message naming the value and what is allowed.

Two tables under charts/bench/tests/: bad-values.yaml (a row per bad value: id, the values file,
the regular expression its rejection must contain) and hostile-values.yaml (the same, per sink).
"""
import re

import pytest
import yaml

from conftest import CHART_SRC, KUBE_VERSION, NAMESPACE, RELEASE

BAD_TABLE = CHART_SRC / "tests" / "bad-values.yaml"
BAD = yaml.safe_load(BAD_TABLE.read_text())
# The table's rows are the cases: an empty table stops the collection.
assert BAD, f"no rows in {BAD_TABLE}"


def test_bad_table_is_well_formed():
    ids = [row["id"] for row in BAD]
    assert len(ids) == len(set(ids)), "duplicate ids in bad-values.yaml"
    for row in BAD:
        assert set(row) == {"id", "values", "expect"}, row["id"]
        assert isinstance(yaml.safe_load(row["values"]), dict), row["id"]
        re.compile(row["expect"])


@pytest.mark.parametrize("row", BAD, ids=lambda row: row["id"])
def test_refuses_bad_values(helm, row, tmp_path):
    values = tmp_path / "values.yaml"
    values.write_text(row["values"])
    result = helm.template("-f", helm.runner_values, "-f", values)
    assert result.returncode != 0, f"{row['id']} rendered without error"
    assert re.search(row["expect"], result.stderr), f"no /{row['expect']}/ in:\n{result.stderr}"


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

"""Bad values are refused at `helm template` time with a message naming the value and what is allowed.

Two tables under charts/bench/tests/: bad-values.yaml (a row per bad value: id, the values file,
the regular expression its rejection must contain) and hostile-values.yaml (the same, per sink).
"""
import re

import pytest
import yaml

from conftest import CHART_SRC, KUBE_VERSION, NAMESPACE, RELEASE

def load_table(name):
    """The rows of charts/bench/tests/NAME: the cases (an empty table stops the collection), each
    id once, each expected message a valid regular expression."""
    rows = yaml.safe_load((CHART_SRC / "tests" / name).read_text())
    assert rows, f"no rows in {CHART_SRC / 'tests' / name}"
    return rows


def assert_table_ids_and_patterns(rows, name):
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)), f"duplicate ids in {name}"
    for row in rows:
        re.compile(row["expect"])


def assert_refused(helm, row, tmp_path):
    """`helm template` (v3 or v4) of the row's values fails with a message matching its `expect`."""
    values = tmp_path / "values.yaml"
    values.write_text(row["values"])
    result = helm("template", row.get("release", RELEASE), helm.chart, "-n", NAMESPACE,
                  "--kube-version", KUBE_VERSION, "-f", helm.runner_values, "-f", values)
    assert result.returncode != 0, f"{row['id']} rendered without error:\n{result.stdout[-3000:]}"
    assert re.search(row["expect"], result.stderr), f"no /{row['expect']}/ in:\n{result.stderr}"


BAD = load_table("bad-values.yaml")


def test_bad_table_is_well_formed():
    assert_table_ids_and_patterns(BAD, "bad-values.yaml")
    for row in BAD:
        assert set(row) == {"id", "values", "expect"}, row["id"]
        assert isinstance(yaml.safe_load(row["values"]), dict), row["id"]


@pytest.mark.parametrize("row", BAD, ids=lambda row: row["id"])
def test_refuses_bad_values(helm, row, tmp_path):
    assert_refused(helm, row, tmp_path)


# Hostile values: one table, charts/bench/tests/hostile-values.yaml, a row per value and sink (the
# k6-operator initializer's shell, YAML printed into a manifest, tpl, a run that would fail in the
# cluster, the runner's rights or a run's meaning widened, a credential in plain text), each refused
# with a message naming the key.
HOSTILE = load_table("hostile-values.yaml")


def test_hostile_table_is_well_formed():
    assert_table_ids_and_patterns(HOSTILE, "hostile-values.yaml")
    for row in HOSTILE:
        assert set(row) <= {"id", "sink", "values", "release", "expect"}, row["id"]
        assert row["sink"] in ("shell", "yaml", "template", "run", "rights", "secret"), row["id"]
        assert row["id"].startswith(row["sink"] + "-"), row["id"]


@pytest.mark.parametrize("row", HOSTILE, ids=lambda row: row["id"])
def test_refuses_hostile_values(helm, row, tmp_path):
    assert_refused(helm, row, tmp_path)

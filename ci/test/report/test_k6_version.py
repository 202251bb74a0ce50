"""Runs made on different k6 releases are not compared silently: the report's comparability check
reads settings.k6_version, which every runner's summary records (k6/x/bench k6Version) and a merged
summary takes from k6_bench_run_info. A summary written before it was recorded reads "not recorded"."""
import json

import pytest

from benchreport.summary import label_runs, load_summary
from benchreport.verdict import comparability_warnings
from conftest import TESTDATA


def run_on(tmp_path, name, k6_version):
    data = json.loads((TESTDATA / "traefik.json").read_text())
    if k6_version is None:
        data["settings"].pop("k6_version", None)
    else:
        data["settings"]["k6_version"] = k6_version
    data["testid"] = name
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return load_summary(path)[0]


def k6_warnings(runs):
    return [w for w in comparability_warnings(runs) if "settings.k6_version" in w]


@pytest.mark.parametrize("a, b, warned", [
    ("v1.8.1", "v1.8.1", False),
    ("v1.8.1", "v1.9.0", True),
    ("v1.8.1", None, True),       # one written before the release was recorded
    (None, None, False),
])
def test_runs_on_different_k6_releases_are_not_comparable(tmp_path, a, b, warned):
    runs = [run_on(tmp_path, "a", a), run_on(tmp_path, "b", b)]
    label_runs(runs)
    warnings = k6_warnings(runs)
    assert bool(warnings) == warned, warnings
    if warned:
        assert f'"{a}" in {runs[0].label}' in warnings[0], warnings
        assert f'"{b or "not recorded"}" in {runs[1].label}' in warnings[0], warnings

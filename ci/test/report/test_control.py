"""The controller's added latency (report --direct TESTID; the matrix runner passes its
loadtest.target=pod variant): each run's percentiles minus the control's, with the error bound of
merged percentiles (both sides' merge.percentile_max_error_pct) stated beside each."""
import json

import pytest

from conftest import TESTDATA, output_of

THROUGH_P99, DIRECT_P99, ERROR_PCT = 12.0, 4.0, 9.05


@pytest.fixture(scope="session")
def control_report(report, work):
    base = json.loads((TESTDATA / "traefik.json").read_text())
    paths = {}
    for testid, p99, error in (("through", THROUGH_P99, ERROR_PCT), ("direct", DIRECT_P99, None)):
        doc = json.loads(json.dumps(base))
        doc["testid"], doc["latency_ms"]["p99"] = testid, p99
        if error is not None:  # a merged run: exact to one bucket
            doc["merge"] = {"source": "prometheus", "runners": 2, "percentile_max_error_pct": error}
        paths[testid] = work / f"control-{testid}.json"
        paths[testid].write_text(json.dumps(doc))
    out = work / "out/control"
    r = report("--out", str(out), "--direct", "direct", str(paths["through"]), str(paths["direct"]))
    assert r.returncode == 0, output_of(r)
    return json.loads((out / "report.json").read_text()), (out / "report.md").read_text(), paths


def test_added_latency_is_through_minus_direct(control_report):
    data, _, _ = control_report
    assert data["added_latency"]["direct"] == "direct"
    (row,) = data["added_latency"]["runs"].values()
    assert row["p99"]["added_ms"] == pytest.approx(THROUGH_P99 - DIRECT_P99)
    assert row["p99"]["through_ms"] == THROUGH_P99 and row["p99"]["direct_ms"] == DIRECT_P99


def test_error_bound_from_the_merged_side(control_report):
    """Only the merged run has a bucket error; the direct runner summary is exact."""
    data, md, _ = control_report
    (row,) = data["added_latency"]["runs"].values()
    assert row["p99"]["error_ms"] == pytest.approx(THROUGH_P99 * ERROR_PCT / 100, abs=0.001)
    assert "## Controller's added latency" in md and f"{THROUGH_P99 - DIRECT_P99:g} ± 1.086" in md


def test_no_section_without_direct(gen):
    r = gen("no-control", TESTDATA / "traefik.json", TESTDATA / "dropped.json")
    assert r.returncode == 0, output_of(r)
    assert gen.json("no-control")["added_latency"] is None
    assert "added latency" not in gen.md("no-control")


def test_unknown_direct_run_refused(report, work, control_report):
    _, _, paths = control_report
    r = report("--out", str(work / "out/control-bad"), "--direct", "nope", str(paths["through"]))
    assert r.returncode == 2 and "--direct 'nope' is not the run id of any summary given" in r.stderr, output_of(r)

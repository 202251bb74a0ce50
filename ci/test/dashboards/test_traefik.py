"""The controller view's Traefik panels against a real Traefik v3.6.12 (no cluster):
verify-traefik.sh builds Traefik when it is not cached (ci/e2e/build-binaries.sh, shared with the
scenarios and e2e parts through the build lock), never a silent skip, and runs real k6 load
through it while its file provider's server list changes; one case per required panel and one for
the configuration reloads."""
import json

import pytest

from conftest import ROOT, Run, assert_panel_has_data, output_of, panel_ids, required_panels, run

SELECTORS = ["@traefik", "bench-controllers/Run:*"]
PANELS = required_panels(SELECTORS)


@pytest.fixture(scope="module")
def traefik(tmp_path_factory):
    d = tmp_path_factory.mktemp("traefik")
    r = run(["bash", ROOT / "ci/test/dashboards/verify-traefik.sh", "--results", d])
    t = Run("traefik", 0, r.returncode, d)
    t.check_rc, t.check_log = r.returncode, output_of(r)
    report = d / "report.json"
    if not (report.is_file() and report.stat().st_size):
        pytest.fail(f"verify-traefik.sh stopped before its checks (exit {r.returncode}):\n{t.check_log[-6000:]}")
    t.report = json.loads(report.read_text())
    t.reloads = float((d / "reloads").read_text().strip() or 0) if (d / "reloads").is_file() else 0
    return t


@pytest.mark.parametrize("uid, title", PANELS, ids=panel_ids(PANELS))
def test_traefik_panel_has_data(traefik, uid, title):
    assert_panel_has_data(traefik, uid, title)


def test_traefik_reloads(traefik):
    """6 server-list changes show up as at least 5 configuration reloads; and verify-traefik.sh's
    exit agrees with the checks (a non-zero exit with every check passing is a failure too)."""
    assert traefik.reloads >= 5, f"{traefik.reloads} configuration reloads from 6 server-list changes (want >= 5)"
    missing = [p for p in traefik.report["panels"] if p.get("required") and not p["data"]]
    assert traefik.rc == 0 or missing, f"verify-traefik.sh exited {traefik.rc} with every check passing:\n{traefik.check_log}"

"""The route experiments against Traefik's Gateway API and Ingress providers: ci/test/routes.sh (its
own API server, CRDs, backend) until its pytest modules land in routes/, which pytest then collects
with this part instead."""
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
ROUTES_SH = ROOT / "ci" / "test" / "routes.sh"


def test_routes_sh_passes_every_check(work):
    if not ROUTES_SH.exists():
        pytest.skip("ci/test/routes.sh is gone: its tests are ci/test/scenarios/routes/")
    if list((Path(__file__).parent / "routes").glob("test_*.py")):
        pytest.skip("ci/test/scenarios/routes/ has the route tests: routes.sh would run them twice")
    log = work / "routes.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["bash", str(ROUTES_SH)], stdout=out, stderr=subprocess.STDOUT, env=os.environ)
    try:
        rc = proc.wait()
    except BaseException:
        # interrupted: SIGTERM lets its EXIT trap stop its servers and remove its network namespace
        proc.terminate()
        proc.wait(60)
        raise
    text = log.read_text(errors="replace")
    lines = re.findall(r"^routes: (\d+) passed, (\d+) failed, (\d+) skipped$", text, re.M)
    assert lines, f"ci/test/routes.sh ended without its closing line (exit {rc}):\n{text[-5000:]}"
    passed, failed, skipped = map(int, lines[-1])
    print(f"routes: {passed} passed, {failed} failed, {skipped} skipped (ci/test/routes.sh)")
    assert failed == 0 and rc == 0 and passed > 0, \
        "\n".join(l for l in text.splitlines() if " FAIL " in l or l.startswith("error")) or text[-5000:]

"""What a k6 start costs: k6 v0.51 compiles every ES module through Babel (about 1.5 ms of CPU a
line: 5-6 s for bench's library, on each k6 start: the TestRun's initializer runs two, every runner
one, and at a pod's CPU request of 200m that is about 30 s before the first request). CommonJS
goes straight to k6's JavaScript engine, so scenarios/lib/ is written in CommonJS (`require`,
`module.exports`) and only the entry script, a few lines, is an ES module (scenarios/README.md,
"k6 v0.51 and current k6")."""
import re

import pytest

from conftest import SCENARIOS, run

ENTRY_SCRIPTS = sorted(p.name for p in SCENARIOS.glob("*.js"))
# Enough for every entry script's init: the TLS experiment wants https, paths one path's URL.
INIT_ENV = {"BENCH_TARGET_URL": "https://127.0.0.1:9", "BENCH_URL_POD": "http://127.0.0.1:9"}


@pytest.mark.parametrize("script", ENTRY_SCRIPTS)
def test_only_the_entry_script_goes_through_babel(script):
    args = [a for k, v in INIT_ENV.items() for a in ("-e", f"{k}={v}")]
    result = run(["k6", "inspect", "-v", *args, SCENARIOS / script])
    assert result.returncode == 0, result.stderr[-2000:]
    transformed = result.stderr.count('msg="Babel: Transformed"')
    assert transformed == 1, (f"k6 ran {transformed} modules through Babel for {script}; only the entry "
                              "script should be an ES module (scenarios/lib/ is CommonJS)")


@pytest.mark.parametrize("module", sorted(p.name for p in (SCENARIOS / "lib").glob("*.js")))
def test_library_module_is_commonjs(module):
    text = (SCENARIOS / "lib" / module).read_text()
    esm = re.findall(r"^(?:import|export)\b.*$", text, re.M)
    assert not esm, f"scenarios/lib/{module} has ES module statements (Babel at every k6 start): {esm[:3]}"
    assert "module.exports = {" in text, f"scenarios/lib/{module} exports nothing through module.exports"

"""What a k6 start costs. k6 v1 runs scripts with no transpiler: nothing is transformed at start.
scenarios/lib/ stays CommonJS (`require`, `module.exports`): on k6 v1.8.1 an ES module costs every
VU about 8 KB against 4 KB for a CommonJS one, measured side by side (dynamic.js, whose every VU
loads 15 library modules: 318 vs 230 KB a VU, and 9.3 vs 6.9 s of CPU to start 1,000 more VUs;
scenarios/calibrate/README.md, "Memory per VU"). Entry scripts are ES modules, as users write them,
and import the library with `import { name } from './lib/x.js'`. A library module loads what only
VU 0 needs (options, setup, the summary writer) behind `__VU === 0`."""
import re

import pytest

from conftest import SCENARIOS, run

ENTRY_SCRIPTS = sorted(p.name for p in SCENARIOS.glob("*.js"))
LIBRARY = sorted(p.name for p in (SCENARIOS / "lib").glob("*.js"))
# Enough for every entry script's init: the TLS experiment wants https, paths one path's URL.
INIT_ENV = {"BENCH_TARGET_URL": "https://127.0.0.1:9", "BENCH_URL_POD": "http://127.0.0.1:9"}


@pytest.mark.parametrize("script", ENTRY_SCRIPTS)
def test_nothing_is_transformed_at_start(script):
    """k6 loads every module of the script as it is: no Babel or other transform step in its log
    (k6 v0.51 logged one per ES module and spent seconds of CPU on the library at every start)."""
    args = [a for k, v in INIT_ENV.items() for a in ("-e", f"{k}={v}")]
    result = run(["k6", "inspect", "-v", *args, SCENARIOS / script])
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = re.findall(r'moduleSpecifier="file://[^"]*/scenarios/lib/([\w-]+\.js)"', result.stderr)
    assert loaded, f"k6 -v logged no library module loaded for {script}: the check reads nothing"
    transformed = re.findall(r"^.*(?:Babel|[Tt]ranspil|[Tt]ransform).*$", result.stderr, re.M)
    assert not transformed, f"k6 transformed modules of {script}: {transformed[:3]}"
    # nor a warning, such as a deprecated module k6 is about to remove (k6/experimental/websockets)
    warned = re.findall(r"^.*level=warning.*$", result.stderr, re.M)
    assert not warned, f"k6 warns at the start of {script}: {warned[:3]}"


@pytest.mark.parametrize("module", LIBRARY)
def test_library_module_is_commonjs(module):
    text = (SCENARIOS / "lib" / module).read_text()
    esm = re.findall(r"^(?:import|export)\b.*$", text, re.M)
    assert not esm, f"scenarios/lib/{module} has ES module statements (each costs every VU memory): {esm[:3]}"
    assert "module.exports = {" in text, f"scenarios/lib/{module} exports nothing through module.exports"

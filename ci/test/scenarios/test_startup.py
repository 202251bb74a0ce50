"""What a k6 start costs. k6 v1 runs ES modules natively: nothing goes through a transpiler, so
scenarios/lib/ is written as ES modules (`import`/`export`), the way k6's own examples are, at no
start-up cost (scenarios/README.md, "k6 versions"). A library module loads code only VU 0 needs
(options, setup, the summary writer) with `require` behind `__VU === 0`, so the load VUs never hold
it (scenarios/calibrate/README.md, "Memory per VU"); every other dependency is a static import."""
import re

import pytest

from conftest import SCENARIOS, run

ENTRY_SCRIPTS = sorted(p.name for p in SCENARIOS.glob("*.js"))
LIBRARY = sorted(p.name for p in (SCENARIOS / "lib").glob("*.js"))
# Enough for every entry script's init: the TLS experiment wants https, paths one path's URL.
INIT_ENV = {"BENCH_TARGET_URL": "https://127.0.0.1:9", "BENCH_URL_POD": "http://127.0.0.1:9"}
# A require a library module may make: the VU-0-only loads, each inside a `__VU === 0 ? ... : null`.
VU0_REQUIRE = re.compile(r"__VU === 0\s*\?\s*(?:\{[^{}]*\}|require\('[^']+'\))\s*:\s*null", re.S)


@pytest.mark.parametrize("script", ENTRY_SCRIPTS)
def test_nothing_is_transformed_at_start(script):
    """k6 loads every module of the script as it is: no Babel or other transform step in its log
    (a k6 older than v0.52 would log one per ES module)."""
    args = [a for k, v in INIT_ENV.items() for a in ("-e", f"{k}={v}")]
    result = run(["k6", "inspect", "-v", *args, SCENARIOS / script])
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = re.findall(r'moduleSpecifier="file://[^"]*/scenarios/lib/([\w-]+\.js)"', result.stderr)
    assert loaded, f"k6 -v logged no library module loaded for {script}: the check reads nothing"
    transformed = re.findall(r"^.*(?:Babel|[Tt]ranspil|[Tt]ransform).*$", result.stderr, re.M)
    assert not transformed, f"k6 transformed modules of {script}: {transformed[:3]}"


@pytest.mark.parametrize("module", LIBRARY)
def test_library_module_is_an_es_module(module):
    text = (SCENARIOS / "lib" / module).read_text()
    assert re.search(r"^export \{", text, re.M), f"scenarios/lib/{module} has no `export {{ ... }}` list"
    assert "module.exports" not in text, f"scenarios/lib/{module} still exports through module.exports"
    requires = len(re.findall(r"\brequire\(", text))
    allowed = sum(m.group(0).count("require(") for m in VU0_REQUIRE.finditer(text))
    assert requires == allowed, (f"scenarios/lib/{module}: {requires - allowed} require() outside a "
                                 "`__VU === 0 ? ... : null` load; import it statically")


def test_vu0_rule_reads_what_it_allows():
    """The rule above refuses a require outside VU 0 and accepts the guarded forms."""
    assert not VU0_REQUIRE.search("const x = require('./x.js');")
    assert VU0_REQUIRE.search("const w = __VU === 0 ? require('./summary-writer.js') : null;")
    assert VU0_REQUIRE.search("const vu0 = __VU === 0\n  ? { load: require('./load.js'), s: require('./s.js') }\n  : null;")

"""Every test part declares the Debian packages its own code runs (ci/test/<part>/packages.txt), so
ci/test/all.sh installs them before the part and a part runs alone, first, on a new machine.

A new machine has none of Debian's optional packages: the dashboards part once ran `promtool` (which
only Debian's prometheus package carries) before a later fixture installed it, and failed 27 cases
on a fresh machine while passing on every machine an earlier run had warmed. This reads each part's
code for the commands below and fails when the package that carries one is not declared."""
import re
from pathlib import Path

import pytest

from conftest import ROOT

TEST_ROOT = ROOT / "ci" / "test"
CHECKERS = ROOT / "ci" / "tools" / "dashboards"
PARTS = sorted(p.parent.name for p in TEST_ROOT.glob("*/conftest.py"))

# command -> the Debian packages any of which provides it (bookworm)
PROVIDERS = {
    "promtool": {"prometheus"},
    "prometheus": {"prometheus"},
    "nginx": {"nginx-light", "nginx-core", "nginx"},
    "chromium": {"chromium"},
    "openssl": {"openssl"},
    "curl": {"curl"},
    "jq": {"jq"},
    "wrk": {"wrk"},
    "ip": {"iproute2"},
    "unshare": {"util-linux"},
    "nsenter": {"util-linux"},
    "git": {"git"},
}
# A command as Python runs it (the first word of an argv list, or a default argument naming the
# program, as lint.py's promtool="promtool") or as a shell line starts it.
PY_CALL = re.compile(r'''(?:(?<![\w\]])\[\s*(?:"timeout",\s*"\d+",\s*)?|\w=)["'](%s)["']''' % "|".join(PROVIDERS))
SH_CALL = re.compile(r'''(?:^|[;&|(]|\b(?:until|if|then|do|!))\s*(%s)\s''' % "|".join(PROVIDERS), re.M)


def declared(part):
    text = (TEST_ROOT / part / "packages.txt").read_text()
    return {line.split("#")[0].strip() for line in text.splitlines()} - {""}


def harness_modules_of(source):
    """The shared harness modules a part's Python imports (ci/test/harness/*.py)."""
    names = set(re.findall(r"from harness(?:\.(\w+))? import ([\w, ]+)", source))
    mods = set()
    for sub, imported in names:
        mods |= {sub} if sub else {n.strip() for n in imported.split(",")}
    return {TEST_ROOT / "harness" / f"{m}.py" for m in mods if (TEST_ROOT / "harness" / f"{m}.py").exists()}


def checker_modules_of(source):
    """The dashboard checkers (ci/tools/dashboards/*.py) a file imports or runs by path."""
    names = set(re.findall(r"^\s*(?:import|from) (\w+)", source, re.M))
    names |= set(re.findall(r"ci/tools/dashboards/(\w+)\.py", source))
    return {CHECKERS / f"{n}.py" for n in names if (CHECKERS / f"{n}.py").exists()}


def commands_run_by(part):
    """{command: first file that runs it} over the part's .py/.sh files, the harness modules they
    import and the dashboard checkers they import or run (and those the checkers import)."""
    files = sorted((TEST_ROOT / part).rglob("*.py")) + sorted((TEST_ROOT / part).rglob("*.sh"))
    files += sorted(set().union(*(harness_modules_of(f.read_text()) for f in files if f.suffix == ".py")))
    checkers = set().union(*(checker_modules_of(f.read_text()) for f in files))
    checkers |= set().union(set(), *(checker_modules_of(f.read_text()) for f in checkers))
    files += sorted(checkers - set(files))
    found = {}
    for f in files:
        if f.resolve() == Path(__file__).resolve():  # this checker names every command
            continue
        text = f.read_text()
        pattern = PY_CALL if f.suffix == ".py" else SH_CALL
        for cmd in pattern.findall(text):
            found.setdefault(cmd, f.relative_to(ROOT))
    return found


@pytest.mark.parametrize("part", PARTS)
def test_part_declares_the_packages_it_runs(part):
    have = declared(part)
    missing = {cmd: str(where) for cmd, where in commands_run_by(part).items() if not PROVIDERS[cmd] & have}
    assert not missing, (f"ci/test/{part}/packages.txt lacks a package for {missing} "
                         f"(add one of {[sorted(PROVIDERS[c]) for c in missing]})")


def test_the_check_sees_promtool_in_the_dashboards_part():
    """The case that was missed: lint.py runs promtool; without prometheus declared it goes red."""
    assert "promtool" in commands_run_by("dashboards")
    assert "prometheus" in declared("dashboards")


def test_all_sh_installs_each_parts_packages_before_running_it():
    text = (TEST_ROOT / "all.sh").read_text()
    body = text[text.index("run_part() {"):]
    assert body.index("apt_install $(part_packages") < body.index("run_pytest"), body[:400]

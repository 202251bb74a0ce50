"""What every pytest part shares: its closing line.

ci/test/all.sh runs a part on pytest when ci/test/<part>/ has a conftest.py; this file, beside
pytest.ini, is loaded for each of them.
"""
from pathlib import Path

import pytest

COUNTS = pytest.StashKey()


def pytest_terminal_summary(terminalreporter, config):
    # the categories pytest's own summary counts: a failed setup or teardown is an "error"
    count = lambda *categories: sum(len(terminalreporter.stats.get(c, [])) for c in categories)
    config.stash[COUNTS] = (count("passed"), count("failed", "error"), count("skipped"))


def pytest_unconfigure(config):
    """After pytest's own summary: "<part>: N passed, N failed, N skipped", counting cases (a case
    run on helm v3 and v4 is two cases); errors count as failures. The part is the folder given."""
    counts = config.stash.get(COUNTS, None)
    if counts:
        part = Path(config.args[0]).resolve().name if config.args else "pytest"
        print(f"{part}: {counts[0]} passed, {counts[1]} failed, {counts[2]} skipped")

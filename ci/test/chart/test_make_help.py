"""`make help`: plain text through a pipe (no colour codes), the ##@ groups as headings, where to start,
what needs root, and one short line per target; colour stays on a terminal."""
import os
import pty
import re
import subprocess

import pytest

from conftest import ROOT

MAKEFILE = (ROOT / "Makefile").read_text()
GROUPS = re.findall(r"^##@ (.+)$", MAKEFILE, re.M)
TARGETS = dict(re.findall(r"^([a-zA-Z0-9_-]+):.*?## (.+)$", MAKEFILE, re.M))
MAX_LINE = 100


def help_through_a_pipe(makefile_dir=ROOT):
    result = subprocess.run(["make", "--no-print-directory", "-C", str(makefile_dir), "help"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def piped():
    return help_through_a_pipe()


def test_no_escape_characters_in_a_pipe(piped):
    assert "\x1b" not in piped, repr(piped[:200])


def test_group_headings(piped):
    lines = piped.splitlines()
    assert len(GROUPS) >= 4, GROUPS
    for group in GROUPS:
        assert group in lines, f"heading {group!r} missing"


def test_start_here_and_root(piped):
    first = piped.splitlines()[0]
    assert first.startswith("Start here:") and "make demo" in first and "make test" in first, first
    assert "[root]" in piped
    for target in ("demo", "test", "cluster-up"):
        assert TARGETS[target].startswith("[root] "), (target, TARGETS[target])


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_each_target_has_one_short_help_line(piped, target):
    lines = [l for l in piped.splitlines() if re.match(rf"  {re.escape(target)} +\S", l)]
    assert len(lines) == 1, (target, lines)
    assert len(lines[0]) < MAX_LINE, lines[0]


def group_of(piped, target):
    """The ##@ heading the help prints TARGET under."""
    group = None
    for line in piped.splitlines():
        if line in GROUPS:
            group = line
        elif re.match(rf"  {re.escape(target)} ", line):
            return group
    raise AssertionError(f"{target} not in the help")


@pytest.mark.parametrize("target, group", [("docs", "Docs"), ("schema", "Docs"), ("test-alone", "Tests"),
                                           ("mutants", "Tests"),
                                           ("demo", "Benchmarks")])
def test_target_under_its_group(piped, target, group):
    """The generators of docs and schema are no test: they sit under their own heading."""
    assert group_of(piped, target).startswith(group), (target, group_of(piped, target))


def test_every_line_short(piped):
    assert [l for l in piped.splitlines() if len(l) >= MAX_LINE] == []


def test_colour_on_a_terminal():
    """The check above can fail: on a terminal the same target prints colour codes."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("make", ["make", "--no-print-directory", "-C", str(ROOT), "help"])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    assert b"\x1b[" in out, out[:200]

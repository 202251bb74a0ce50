#!/usr/bin/env python3
"""Writes README.md's times table from its one source, the "Test times" table of ci/README.md.

Usage: ci/tools/doc-figures.py --write    rewrite the block between the BEGIN/END times markers
       ci/tools/doc-figures.py --check    exit 1 (printing the difference) when README.md differs
The chart part's test_docs.py runs --check; to change a figure, edit ci/README.md and run `make docs`.
"""
import difflib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = ROOT / "ci" / "README.md"
TARGET = ROOT / "README.md"
BLOCK = re.compile(r"(<!-- BEGIN times:[^\n]*-->\n)(.*?)(<!-- END times -->)", re.S)
HEADER = "| command | cold | warm | measured |"


def source_rows(text=None):
    """{command: (cold, warm)} from ci/README.md's Test times table, in its order."""
    lines = (text if text is not None else SOURCE.read_text()).splitlines()
    try:
        start = lines.index(HEADER)
    except ValueError:
        sys.exit(f"{SOURCE}: no table with the header {HEADER!r}")
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0]] = (cells[1], cells[2])
    return rows


def block(rows):
    out = ["| command | cold (fresh clone, empty `HOME`) | warm (caches filled) |", "|---|---|---|"]
    for command in ("`make demo`", "`make test`"):
        if command not in rows:
            sys.exit(f"{SOURCE}: the Test times table has no {command} row")
        cold, warm = rows[command]
        out.append(f"| {command} | {cold} | {warm} |")
    return "\n".join(out) + "\n"


def rendered(readme_text, rows):
    match = BLOCK.search(readme_text)
    if not match:
        sys.exit(f"{TARGET}: no '<!-- BEGIN times: ... -->' ... '<!-- END times -->' block")
    return readme_text[:match.start(2)] + block(rows) + readme_text[match.end(2):]


def main(argv):
    if argv not in (["--write"], ["--check"]):
        sys.exit(__doc__)
    current = TARGET.read_text()
    want = rendered(current, source_rows())
    if argv == ["--write"]:
        TARGET.write_text(want)
        return 0
    if want != current:
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), want.splitlines(True),
                                                   "README.md", "README.md from ci/README.md"))
        print("README.md's times differ from ci/README.md \"Test times\": run ci/tools/doc-figures.py --write")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

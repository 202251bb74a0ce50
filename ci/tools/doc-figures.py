#!/usr/bin/env python3
"""Writes the documents' copies of facts from their one source each (`make docs`):
- README.md's times table from the "Test times" table of ci/README.md;
- every version a tracked file mentions ("Traefik v3.6.12", "helm v3.22.0": ci/tools/pins.py MENTIONS)
  from its pin (the versions.env files, values/traefik.yaml, Chart.yaml; ci/tools/pins.py);
- every count a Markdown file marks `<!-- figure: NAME -->152<!-- /figure -->` from the file it counts
  (FIGURES: the rows of the chart's bad-values and hostile-values tables, the mutation score that
  `make mutants` recorded).

Usage: ci/tools/doc-figures.py --write    rewrite the times block and every stale version mention
       ci/tools/doc-figures.py --check    exit 1 (printing each difference) when a copy differs
The chart part's test_docs.py and test_pins.py run --check; to change a time, edit ci/README.md, to
change a version, its pin file, a count changes with its table; then run `make docs`.
"""
import difflib
import json
import pathlib
import re
import sys

import pins  # ci/tools/pins.py, beside this script

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


FIGURE = re.compile(r"(<!-- figure: ([\w-]+) -->)(.*?)(<!-- /figure -->)", re.S)
TABLES = ROOT / "charts" / "bench" / "tests"


def table_rows(name):
    """The rows of a chart test table (charts/bench/tests/NAME): one `- id:` line each."""
    return re.findall(r"^- id: .*$", (TABLES / name).read_text(), re.M)


def hostile_by_sink():
    sinks = re.findall(r"^  sink: (\w+)", (TABLES / "hostile-values.yaml").read_text(), re.M)
    words = {"shell": "shell", "yaml": "YAML", "template": "template", "run": "run-time", "rights": "rights",
             "secret": "secret"}
    unknown = sorted(set(sinks) - set(words))
    if unknown:
        sys.exit(f"{TABLES / 'hostile-values.yaml'}: sink(s) {unknown} have no word in doc-figures.py")
    return ", ".join(f"{sinks.count(k)} {w}" for k, w in words.items() if k in sinks)


def mutants_score():
    """The last whole `make mutants` run, from the record it wrote (ci/tools/mutants-record.json)."""
    r = json.loads((ROOT / "ci" / "tools" / "mutants-record.json").read_text())
    return (f"{r['caught']} of {r['mutants']} mutants caught ({r['score_pct']:g} %), {r['kept']} kept as "
            f"uncatchable, on {r['commit']} ({r['date']})")


# A figure's name -> how it is counted, from the file it counts.
FIGURES = {
    "mutants": mutants_score,
    "bad-values": lambda: str(len(table_rows("bad-values.yaml"))),
    "hostile-values": lambda: str(len(table_rows("hostile-values.yaml"))),
    "hostile-values-by-sink": hostile_by_sink,
}


def figures_rendered(text, path):
    """TEXT with every figure marker's content counted afresh; an unknown name stops the script."""
    def fill(m):
        if m.group(2) not in FIGURES:
            sys.exit(f"{path}: unknown figure {m.group(2)!r} (known: {', '.join(FIGURES)})")
        return m.group(1) + FIGURES[m.group(2)]() + m.group(4)
    return FIGURE.sub(fill, text)


def figure_files():
    """{path: text} of the tracked Markdown files that mark a figure."""
    return {path: text for path, text in pins.tracked_texts(ROOT).items()
            if path.endswith(".md") and FIGURE.search(text)}


def write_versions():
    """Rewrites every stale version mention to its pin; prints the files it changed."""
    versions = pins.read_pins(ROOT)
    texts = pins.tracked_texts(ROOT)
    for line in pins.stale(texts, versions):
        path = line.split(":", 1)[0]
        if texts[path] is None:
            continue  # already written
        (ROOT / path).write_text(pins.rewrite(path, texts[path], versions))
        texts[path] = None
        print(f"wrote {path}")


def check_versions():
    """Exit status 1, naming the file, the line and the pin, when a mention differs from its pin."""
    stale = pins.stale(pins.tracked_texts(ROOT), pins.read_pins(ROOT))
    for line in stale:
        print(line)
    if stale:
        print("versions differ from their pins: run `make docs` (ci/tools/doc-figures.py --write)")
    return 1 if stale else 0


def main(argv):
    if argv not in (["--write"], ["--check"]):
        sys.exit(__doc__)
    current = TARGET.read_text()
    want = rendered(current, source_rows())
    if argv == ["--write"]:
        TARGET.write_text(want)
        for path, text in figure_files().items():
            if figures_rendered(text, path) != text:
                (ROOT / path).write_text(figures_rendered(text, path))
                print(f"wrote {path}")
        write_versions()
        return 0
    status = 0
    if want != current:
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), want.splitlines(True),
                                                   "README.md", "README.md from ci/README.md"))
        print("README.md's times differ from ci/README.md \"Test times\": run ci/tools/doc-figures.py --write")
        status = 1
    for path, text in figure_files().items():
        fresh = figures_rendered(text, path)
        if fresh != text:
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), fresh.splitlines(True), path,
                                                       f"{path} with its figures counted"))
            print(f"{path}: a figure differs from what it counts: run ci/tools/doc-figures.py --write")
            status = 1
    return check_versions() or status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

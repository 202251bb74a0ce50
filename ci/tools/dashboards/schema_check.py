#!/usr/bin/env python3
"""Validates dashboards against the dashboard schema Grafana publishes (npm @grafana/schema).

The package ships the schema as TypeScript types only (no JSON Schema, no CUE), so the faithful
judge is the TypeScript compiler itself: each dashboard becomes a typed constant,

    export const dashboard: BenchDashboard = <the dashboard's JSON>;

and each panel's options and custom field config are typed with that panel plugin's published
types (schema/bench-dashboard.ts says how JSON is read: enum values, options over defaults). An
object literal typed this way is checked for required keys, unknown keys (a typo is an error) and
the type of every value. tsc's errors are reported against the dashboard's own line numbers.

Usage: schema_check.py --tools DIR [--assertions] [DASHBOARD.json | FOLDER]...
  DIR: where ci/tools/grafana-schema.sh installed node_modules/ (it prints the folder)
  --assertions: one line per dashboard for the dashboards test (`ok<TAB>...`/`FAIL<TAB>...`),
    the problems on stderr
Exit status: 0 every dashboard conforms, 1 a problem (printed as `problem:` lines), 2 bad usage.
"""
import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
TYPES = HERE / "schema" / "bench-dashboard.ts"
ERROR_RE = re.compile(r"^(?P<file>[^(]+)\((?P<line>\d+),(?P<col>\d+)\): error (?P<code>TS\d+): (?P<msg>.*)$")


def typed_keys(block):
    """Keys of `export type <block> = { key: ...; }` in bench-dashboard.ts: the panel types checked."""
    m = re.search(r"export type %s = \{(.*?)\n\};" % block, TYPES.read_text(), re.S)
    return re.findall(r"^\s*([a-z-]+):", m.group(1), re.M) if m else []


def panels_of(dash):
    import check  # beside this file: its walk over panels, collapsed rows included
    return (p for p, _row in check.walk_panels(dash))


class Source:
    """One generated TypeScript file; remembers which lines belong to which dashboard part."""

    def __init__(self, path):
        self.path, self.lines, self.spans = path, [], []  # spans: (first, last, name, json line)

    def add(self, text, name, json_first_line=None):
        first = len(self.lines) + 1
        self.lines += text.split("\n")
        self.spans.append((first, len(self.lines), name, json_first_line))

    def where(self, line):
        for first, last, name, json_line in self.spans:
            if first <= line <= last:
                if json_line is not None:
                    return f"{name}:{json_line + line - first}"
                return name
        return f"{self.path.name}:{line}"

    def write(self):
        self.path.write_text("\n".join(self.lines) + "\n")


def build_sources(files, work, options_types, custom_types):
    sources, problems = {}, []
    for f in files:
        text = f.read_text()
        dash = json.loads(text)
        src = Source(work / (re.sub(r"[^A-Za-z0-9]", "_", f.stem) + ".ts"))
        src.add("import type { BenchDashboard, PanelCustom, PanelOptions } from './bench-dashboard';",
                f"{f.name} (header)")
        # The JSON text itself, so tsc's line numbers are the file's own (offset by one line).
        src.add("export const dashboard: BenchDashboard =", f"{f.name} (header)")
        src.add(text.rstrip("\n") + ";", f.name, json_first_line=1)
        for i, p in enumerate(panels_of(dash)):
            kind = p.get("type")
            if kind == "row":
                continue
            name = f'{f.name} panel {p.get("id")} "{p.get("title")}" ({kind})'
            if kind not in options_types:
                problems.append(f"{name}: no published option types are checked for panel type {kind!r} "
                                "(add it to ci/tools/dashboards/schema/bench-dashboard.ts)")
                continue
            src.add(f"export const options_{i}: PanelOptions['{kind}'] = "
                    + json.dumps(p.get("options", {}), indent=2) + ";", f"{name} options")
            custom = p.get("fieldConfig", {}).get("defaults", {}).get("custom")
            if custom is not None:
                if kind in custom_types:
                    src.add(f"export const custom_{i}: PanelCustom['{kind}'] = "
                            + json.dumps(custom, indent=2) + ";", f"{name} fieldConfig.defaults.custom")
                else:
                    problems.append(f"{name}: sets fieldConfig.defaults.custom, which panel type {kind!r} "
                                    "does not declare")
        src.write()
        sources[src.path.name] = src
    return sources, problems


def run_tsc(tools, work, sources):
    (work / "tsconfig.json").write_text(json.dumps({
        "compilerOptions": {"strict": True, "noEmit": True, "target": "es2022", "module": "esnext",
                            "moduleResolution": "bundler", "skipLibCheck": True, "types": []},
        "files": ["bench-dashboard.ts", *sorted(sources)]}))
    tsc = tools / "node_modules" / "typescript" / "bin" / "tsc"
    r = subprocess.run(["node", str(tsc), "-p", str(work), "--pretty", "false"],
                       capture_output=True, text=True)
    problems, current = [], None
    for line in r.stdout.splitlines():
        m = ERROR_RE.match(line)
        if m:
            name = pathlib.Path(m["file"]).name
            src = sources.get(name)
            where = src.where(int(m["line"])) if src else f"{name}:{m['line']}"
            current = f"{where}: {m['code']} {m['msg']}"
            problems.append(current)
        elif line.startswith(" ") and current is not None:
            problems[-1] += " / " + line.strip()  # the rest of a multi-line message
        elif line.strip():
            problems.append(f"tsc: {line}")
    if r.returncode not in (0, 1, 2) or (r.returncode and not problems):
        problems.append(f"tsc exited {r.returncode}: {r.stderr.strip() or r.stdout.strip()}")
    return problems


def schema_version(tools):
    return json.loads((tools / "node_modules/@grafana/schema/package.json").read_text())["version"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=[str(ROOT / "dashboards")])
    ap.add_argument("--tools", required=True, type=pathlib.Path,
                    help="folder with node_modules/@grafana/schema and typescript (ci/tools/grafana-schema.sh)")
    ap.add_argument("--assertions", action="store_true", help="one ok/FAIL line per dashboard")
    args = ap.parse_args(argv)
    if not (args.tools / "node_modules/@grafana/schema/package.json").is_file():
        print(f"error: no @grafana/schema under {args.tools}/node_modules (run ci/tools/grafana-schema.sh)",
              file=sys.stderr)
        return 2
    files = []
    for p in map(pathlib.Path, args.paths):
        files += sorted(p.glob("*.json")) if p.is_dir() else [p]
    if not files or not all(f.is_file() for f in files):
        print(f"error: no dashboard files in {' '.join(args.paths)}", file=sys.stderr)
        return 2
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-schema-"))
    try:
        shutil.copy(TYPES, work / TYPES.name)
        (work / "node_modules").symlink_to(args.tools / "node_modules")
        try:
            sources, problems = build_sources(files, work, typed_keys("PanelOptions"), typed_keys("PanelCustom"))
        except ValueError as e:
            print(f"problem: not valid JSON: {e}")
            return 1
        problems += run_tsc(args.tools, work, sources)
    finally:
        shutil.rmtree(work)
    version = schema_version(args.tools)
    if args.assertions:
        for f in files:
            mine = [p for p in problems if p.startswith((f"{f.name}:", f"{f.name} "))]
            state = "FAIL" if mine else "ok"
            print(f"{state}\t{f.name} conforms to @grafana/schema {version} (dashboard, panel options)"
                  + (f": {len(mine)} problems" if mine else ""))
        others = [p for p in problems if not any(p.startswith((f"{f.name}:", f"{f.name} ")) for f in files)]
        for p in others:
            print(f"FAIL\tschema check: {p}")
        for p in problems:
            print(f"      {p}", file=sys.stderr)
        return 1 if problems else 0
    for p in problems:
        print(f"problem: {p}")
    print(f"schema: {len(files)} dashboards against @grafana/schema {version}, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

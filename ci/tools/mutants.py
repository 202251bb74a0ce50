#!/usr/bin/env python3
"""Mutation testing of the code that decides results (`make mutants`): each named mutant of
ci/tools/mutants.yaml (one or more edits: file, original text that occurs exactly once, its
replacement) is applied alone to a throwaway copy of the tree, and the fast tests it names run
there; a mutant is caught when one of them fails. The working tree is never edited.

Usage: ci/tools/mutants.py [--only ID ...] [--record]   run the mutants (every one, or those named)
       ci/tools/mutants.py --check                    check the table only: each original text still
                                                      occurs exactly once, each command is known
--record writes ci/tools/mutants-record.json (the score, the commit, the date), which `make docs`
prints into ci/README.md. The exit status is 1 when a mutant survives that the table does not keep
(`kept: <why it cannot be caught>`), when the score is under the table's `minimum_score`, or when
the tests fail on the unmutated copy (a mutant would then look caught for nothing).
"""
import argparse
import datetime
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = ROOT / "ci" / "tools" / "mutants.yaml"
RECORD = ROOT / "ci" / "tools" / "mutants-record.json"
# A test command that runs longer than this counts as caught (a mutant that loops), said as such.
TIMEOUT_S = 600


class TableError(ValueError):
    """The table does not describe runnable mutants; the message names the mutant and the problem."""


def load(path=TABLE):
    return yaml.safe_load(path.read_text())


def check(table, root=ROOT):
    """The table's problems, one line each (empty when it is well-formed): unknown keys, commands
    that are not defined, an original text that no longer occurs exactly once in its file, a
    replacement equal to its original, a kept mutant without its reason, a Go mutant run by a
    command that would rebuild k6 (only `go` commands test the Go extension)."""
    problems = []
    commands = table.get("commands") or {}
    for name, cmd in commands.items():
        if set(cmd) - {"run", "cwd", "go"} or ("run" in cmd) == ("go" in cmd):
            problems.append(f"command {name}: give either run (argv) [and cwd] or go (a test pattern)")
    mutants = table.get("mutants") or []
    if not mutants:
        problems.append("no mutants")
    ids = [m.get("id") for m in mutants]
    problems += [f"mutant {i}: id given more than once" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for m in mutants:
        mid = m.get("id", "?")
        unknown = set(m) - {"id", "edits", "tests", "kept"}
        if unknown or not m.get("edits") or not m.get("tests"):
            problems.append(f"mutant {mid}: needs id, edits and tests (unknown keys: {sorted(unknown)})")
            continue
        if "kept" in m and not str(m["kept"]).strip():
            problems.append(f"mutant {mid}: kept needs the reason it cannot be caught")
        for t in m["tests"]:
            if t not in commands:
                problems.append(f"mutant {mid}: unknown command {t!r}")
            elif any(e.get("file", "").endswith(".go") for e in m["edits"]) and "go" not in commands[t]:
                problems.append(f"mutant {mid}: a Go file is tested by go commands only ({t} would rebuild k6)")
        for e in m["edits"]:
            if set(e) != {"file", "original", "mutant"}:
                problems.append(f"mutant {mid}: an edit is file, original and mutant")
                continue
            path = root / e["file"]
            if not path.is_file():
                problems.append(f"mutant {mid}: no file {e['file']}")
                continue
            n = path.read_text().count(e["original"])
            if n != 1:
                problems.append(f"mutant {mid}: its original text occurs {n} times in {e['file']}, not once: "
                                f"{e['original']!r}")
            if e["original"] == e["mutant"]:
                problems.append(f"mutant {mid}: its replacement equals its original")
    return problems


def tree_copy(root, dest):
    """The tree's files as git sees them (tracked and untracked, not ignored; symlinks kept) in dest."""
    names = subprocess.run(["git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard"],
                           capture_output=True, text=True, check=True).stdout
    for name in filter(None, names.split("\0")):
        source, target = root / name, dest / name
        if not (source.is_symlink() or source.is_file()):
            continue  # deleted in the working tree
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)


def go_module(copy, work):
    """A Go module for the extension's tests: the one scenarios/runner/build.sh built k6 in (its go.sum
    pins k6's dependencies), with bench's extension replaced by the copy's (as test_extension.py)."""
    built = subprocess.run(["bash", copy / "scenarios" / "runner" / "build.sh"], capture_output=True, text=True)
    if built.returncode != 0:
        sys.exit(f"scenarios/runner/build.sh failed:\n{built.stderr}")
    cache = pathlib.Path(os.environ.get("BENCH_CACHE", pathlib.Path.home() / ".cache" / "bench"))
    build = cache / "mod" / f"k6-build-{pathlib.Path(built.stdout.strip()).parent.name}" / "k6"
    mod = work / "go-test"
    mod.mkdir()
    for name in ("go.mod", "go.sum", "main.go"):
        shutil.copy(build / name, mod / name)
    subprocess.run(["go", "mod", "edit", "-replace", f"bench.local/xk6-bench={copy}/scenarios/runner/xk6-bench"],
                   cwd=mod, check=True)
    return mod


class Runner:
    """Runs the table's commands in the copy: pytest and k6 through the copy's own tests, Go tests in
    the module go_module made."""

    def __init__(self, table, copy, work):
        self.commands, self.copy, self.work, self.gomod = table["commands"], copy, work, None

    def run(self, name):
        """(passed, seconds, last lines of output) of command NAME."""
        cmd = self.commands[name]
        if "go" in cmd:
            if self.gomod is None:
                self.gomod = go_module(self.copy, self.work)
            argv, cwd = ["go", "test", "-count=1", "-run", cmd["go"], "bench.local/xk6-bench"], self.gomod
        else:
            argv = [sys.executable if a == "{python}" else a for a in cmd["run"]]
            cwd = self.copy / cmd.get("cwd", ".")
        t0 = time.monotonic()
        # a session of its own: a timeout stops the servers a test started too, not only the test
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return False, time.monotonic() - t0, f"timed out after {TIMEOUT_S} s"
        tail = "\n".join(out.strip().splitlines()[-15:])
        return proc.returncode == 0, time.monotonic() - t0, tail


def apply(copy, edits):
    """Writes the mutant into the copy; returns {path: original text} to put back."""
    saved = {}
    for e in edits:
        path = copy / e["file"]
        text = path.read_text()
        saved.setdefault(path, text)
        path.write_text(text.replace(e["original"], e["mutant"], 1))
    return saved


def commit_of(root):
    head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=True).stdout.strip()
    return head + ("+changes" if dirty else "")


def score_line(record):
    return (f"mutants: {record['mutants']}, caught {record['caught']}, survived {record['survived']} "
            f"({record['kept']} kept as uncatchable): score {record['score_pct']} %")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="check the table; run nothing")
    parser.add_argument("--only", nargs="+", metavar="ID", help="run only these mutants")
    parser.add_argument("--record", action="store_true", help=f"write {RECORD.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    table = load()
    problems = check(table)
    for p in problems:
        print(f"{TABLE.relative_to(ROOT)}: {p}")
    if problems:
        return 1
    mutants = table["mutants"]
    if args.check:
        print(f"{TABLE.relative_to(ROOT)}: {len(mutants)} mutants, each original text found once")
        return 0
    if args.only:
        missing = sorted(set(args.only) - {m["id"] for m in mutants})
        if missing:
            sys.exit(f"no mutant {', '.join(missing)} in {TABLE.relative_to(ROOT)}")
        mutants = [m for m in mutants if m["id"] in args.only]
    if args.record and args.only:
        sys.exit("--record needs the whole table (no --only)")
    with tempfile.TemporaryDirectory(prefix="bench-mutants-") as tmp:
        work = pathlib.Path(tmp)
        copy = work / "tree"
        commit = commit_of(ROOT)  # of the tree as copied, not as it is when the run ends
        tree_copy(ROOT, copy)
        runner = Runner(table, copy, work)
        # the tests must pass on the unmutated copy, or every mutant would look caught
        for name in sorted({t for m in mutants for t in m["tests"]}):
            ok, took, tail = runner.run(name)
            print(f"baseline {name}: {'passed' if ok else 'FAILED'} ({took:.0f} s)", flush=True)
            if not ok:
                print(tail)
                return 1
        results = []
        for m in mutants:
            saved = apply(copy, m["edits"])
            try:
                caught_by, took = None, 0.0
                for name in m["tests"]:
                    ok, t, _ = runner.run(name)
                    took += t
                    if not ok:
                        caught_by = name
                        break
            finally:
                for path, text in saved.items():
                    path.write_text(text)
            status = "caught" if caught_by else "kept" if "kept" in m else "SURVIVED"
            results.append((m, status))
            why = f"by {caught_by}" if caught_by else m.get("kept", "no test failed")
            print(f"{status:8} {m['id']} ({took:.0f} s): {why}", flush=True)
    caught = sum(s == "caught" for _, s in results)
    record = {"mutants": len(results), "caught": caught, "survived": len(results) - caught,
              "kept": sum(s == "kept" for _, s in results),
              "score_pct": round(100 * caught / len(results), 1) if results else 0,
              "commit": commit, "date": datetime.date.today().isoformat(),
              "ids": sorted(m["id"] for m, _ in results)}
    print(score_line(record))
    if args.record:
        RECORD.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {RECORD.relative_to(ROOT)}")
    unexplained = [m["id"] for m, s in results if s == "SURVIVED"]
    if unexplained:
        print(f"survived without a reason in the table: {', '.join(unexplained)}")
    minimum = table.get("minimum_score", 0)
    if not args.only and record["score_pct"] < minimum:
        print(f"score {record['score_pct']} % is under the table's minimum_score {minimum} %")
        return 1
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

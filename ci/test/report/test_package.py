"""The product's Python as one project (pyproject.toml): its packages where package-dir says, the tests
importing them through pytest.ini's pythonpath (the same folders), no sys.path edits anywhere, no
import cycle inside the packages, every console script a function that exists, every dependency
pinned in requirements.txt, no function over 80 lines without a reason beside it (the harness' too). Each checker is
also shown to fail on a planted copy."""
import ast
import configparser
import importlib
import re
import subprocess
import tomllib

import pytest

from conftest import ROOT
from harness import pythonpath

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGE_DIRS = PYPROJECT["tool"]["setuptools"]["package-dir"]
LONG_FUNCTION = 80
# A function over LONG_FUNCTION lines names its reason in a comment on its def line or the line above.
LONG_REASON = re.compile(r"#\s*long:\s*\S")
SELF = "ci/test/report/test_package.py"  # names the edits it looks for, to plant them
SYS_PATH_EDIT = re.compile(r"\bsys\.path\s*(\.\s*(insert|append|extend)\b|\[[^\]]*\]\s*=|\+=|=(?!=))|\bsite\.addsitedir\b")


def tracked_python():
    names = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "*.py"], capture_output=True, text=True,
                           check=True).stdout.split("\0")
    return {n: (ROOT / n).read_text() for n in names if n and n != SELF and (ROOT / n).is_file()}


def package_modules():
    """{dotted module name: source} of every module of pyproject.toml's packages."""
    modules = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in sorted((ROOT / folder).glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            modules[name] = path.read_text()
    return modules


# ---- the checkers ----

def wanted_pythonpath():
    """The harness (ci/test), the package folders, ci/tools (its pins module: the pinned versions) and
    ci/tools/dashboards (the dashboard checkers) and ci/e2e (the e2e harness, e2eharness)."""
    return [str(ROOT / "ci/test")] + pythonpath.package_roots() + [str(ROOT / "ci/tools"), str(ROOT / "ci/tools/dashboards"),
                                                                    str(ROOT / "ci/e2e")]


def ini_pythonpath(ini_text):
    """The folders pytest.ini's pythonpath names (relative to ci/test), resolved."""
    ini = configparser.ConfigParser()
    ini.read_string(ini_text)
    return [str((ROOT / "ci/test" / p).resolve()) for p in ini["pytest"]["pythonpath"].split()]


def sys_path_edits(files):
    """'path:line' of every sys.path edit (insert, append, extend, assignment, site.addsitedir)."""
    return [f"{path}:{n}" for path, text in files.items() for n, line in enumerate(text.splitlines(), 1)
            if SYS_PATH_EDIT.search(line.split("#")[0])]


def imports_of(name, source, known):
    """The package modules `name` imports (module level and in functions, not under
    `if __name__ == "__main__":`, which runs only as a program)."""
    package = name if name in PACKAGE_DIRS else name.rsplit(".", 1)[0]
    found = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "__main__" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = package + (f".{base}" if base else "")
                targets = [f"{base}.{a.name}" for a in child.names] + [base]
                found.update(t for t in targets if t in known)
            elif isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name in known)
            visit(child)
    visit(ast.parse(source))
    found.discard(name)
    found.discard(package)  # a module's own package (__init__.py holds nothing but its docstring)
    return found


def import_cycles(graph):
    """Every cycle of {module: imported modules}, each as a list starting and ending at one module."""
    cycles, state = [], {}

    def walk(node, stack):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                walk(nxt, stack + [nxt])
        state[node] = "done"
    for node in sorted(graph):
        if node not in state:
            walk(node, [node])
    return cycles


def long_functions(files, limit=LONG_FUNCTION):
    """'path:line name (N lines)' of every function over limit lines without a `# long:` reason."""
    found = []
    for path, text in files.items():
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                beside = lines[first - 2:first] + [lines[node.lineno - 1]]
                if length > limit and not any(LONG_REASON.search(line) for line in beside):
                    found.append(f"{path}:{node.lineno} {node.name} ({length} lines)")
    return found


def unpinned(dependencies, requirements_text):
    """The dependency names pyproject.toml declares that requirements.txt does not pin with ==."""
    pinned = {re.sub(r"[-_.]+", "-", line.split("==")[0]).lower()
              for line in (l.split("#")[0].strip() for l in requirements_text.splitlines()) if "==" in line}
    names = [re.split(r"[\s<>=!~;\[]", d)[0] for d in dependencies]
    return [n for n in names if re.sub(r"[-_.]+", "-", n).lower() not in pinned]


# ---- the project ----

def test_packages_are_where_package_dir_says():
    assert sorted(PYPROJECT["tool"]["setuptools"]["packages"]) == sorted(PACKAGE_DIRS)
    for package, folder in PACKAGE_DIRS.items():
        assert folder.rsplit("/", 1)[-1] == package, f"{folder}: its folder is not named {package}"
        assert (ROOT / folder / "__init__.py").is_file(), f"{folder}/__init__.py missing"


def test_pytest_pythonpath_is_the_harness_and_the_package_folders():
    got = ini_pythonpath((ROOT / "ci/test/pytest.ini").read_text())
    assert got == wanted_pythonpath()


def test_pytest_pythonpath_check_fails_on_a_missing_folder():
    text = (ROOT / "ci/test/pytest.ini").read_text().replace(" ../../scenarios/calibrate", "")
    assert ini_pythonpath(text) != wanted_pythonpath()


def test_no_sys_path_edits():
    assert sys_path_edits(tracked_python()) == []


@pytest.mark.parametrize("line", ["sys.path.insert(0, str(HERE))", "sys.path.append('x')", "sys.path[:0] = [d]",
                                  "sys.path += ['x']", "sys.path = ['x']", "site.addsitedir(d)"])
def test_sys_path_check_fails_on_an_edit(line):
    assert sys_path_edits({"planted.py": f"import sys\n{line}\n", "fine.py": "if x in sys.path == y: pass\n"}) \
        == ["planted.py:2"]


def test_no_import_cycle_in_the_packages():
    modules = package_modules()
    graph = {name: imports_of(name, text, modules) for name, text in modules.items()}
    assert graph["benchreport.cli"] >= {"benchreport.results", "benchreport.report", "benchreport.provenance"}
    assert import_cycles(graph) == []


def test_import_cycle_check_fails_on_a_module_importing_its_caller():
    modules = package_modules()
    modules["benchreport.results"] += "\nfrom .cli import main\n"
    graph = {name: imports_of(name, text, modules) for name, text in modules.items()}
    assert ["benchreport.cli", "benchreport.results", "benchreport.cli"] in import_cycles(graph)


def test_one_module_parses_arguments():
    """benchreport's command lines live in cli.py only: results and report are called with arguments."""
    parsing = sorted(name for name, text in package_modules().items()
                     if name.startswith("benchreport.") and "argparse" in text)
    assert parsing == ["benchreport.cli"]


@pytest.mark.parametrize("name, target", sorted(PYPROJECT["project"]["scripts"].items()))
def test_console_script_is_a_function(name, target):
    module, _, function = target.partition(":")
    assert callable(getattr(importlib.import_module(module), function, None)), f"{name}: {target}"


def test_every_dependency_pinned():
    deps = PYPROJECT["project"]["dependencies"] + sum(PYPROJECT["project"]["optional-dependencies"].values(), [])
    assert deps and unpinned(deps, (ROOT / "requirements.txt").read_text()) == []


def test_pin_check_fails_on_an_unpinned_dependency():
    text = (ROOT / "requirements.txt").read_text().replace("matplotlib==", "matplotlib>=")
    assert unpinned(PYPROJECT["project"]["dependencies"], text) == ["matplotlib"]


def test_no_long_function_without_its_reason():
    # every tracked Python file: the harness (ci/) keeps the rule too
    assert long_functions(tracked_python()) == []


def test_long_function_check_fails_on_a_long_function():
    body = "".join(f"    x{i} = {i}\n" for i in range(LONG_FUNCTION))
    assert long_functions({"planted.py": f"def f():\n{body}"}) == ["planted.py:1 f (81 lines)"]
    assert long_functions({"planted.py": f"# long: one table, read top to bottom\ndef f():\n{body}"}) == []

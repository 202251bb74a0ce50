"""The checkout's Python packages for the programs the tests start (python -m benchreport, check.py,
render.py): each package's parent folder, read from pyproject.toml's package-dir, their one statement.
pytest.ini's pythonpath gives the tests themselves the same folders (report/test_package.py checks it).
Run as a script, it prints the PYTHONPATH value (ci/test/dashboards/lib.sh exports it for its python3)."""
import os
import tomllib
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[3]


def package_roots(root=ROOT):
    """The folders holding pyproject.toml's packages, in its order, each once."""
    with open(root / "pyproject.toml", "rb") as f:
        dirs = tomllib.load(f)["tool"]["setuptools"]["package-dir"].values()
    return list(dict.fromkeys(str(root / PurePosixPath(d).parent) for d in dirs))


def env(base=None):
    """base (default os.environ) with the packages' folders first on PYTHONPATH."""
    base = dict(os.environ if base is None else base)
    base["PYTHONPATH"] = os.pathsep.join(package_roots() + [p for p in [base.get("PYTHONPATH")] if p])
    return base


if __name__ == "__main__":
    print(os.pathsep.join(package_roots()))

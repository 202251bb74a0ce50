"""Go unit tests of bench's k6 extension (scenarios/runner/xk6-bench), above all the cgroup layouts
this machine cannot show (a k6-operator pod on cgroup v2, with and without a cgroup namespace); the
v1 host is also run for real (test_runner.py). Run in the module scenarios/runner/build.sh built k6
from (its go.sum pins k6's dependencies) with the extension replaced by this checkout's."""
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CACHE = Path(os.environ.get("BENCH_CACHE", Path.home() / ".cache" / "bench"))


def test_xk6_bench_unit_tests_pass(work):
    mod = work / "xk6-bench-test"
    mod.mkdir()
    for name in ("go.mod", "go.sum", "main.go"):
        shutil.copy(CACHE / "mod" / "k6" / name, mod / name)
    edit = subprocess.run(["go", "mod", "edit", "-replace", f"bench.local/xk6-bench={ROOT}/scenarios/runner/xk6-bench"],
                          cwd=mod, capture_output=True, text=True)
    assert edit.returncode == 0, edit.stderr
    # the first run compiles k6's dependencies: minutes
    result = subprocess.run(["go", "test", "-count=1", "bench.local/xk6-bench"], cwd=mod, capture_output=True, text=True)
    assert result.returncode == 0, f"go test exit {result.returncode}:\n{result.stdout}{result.stderr}"

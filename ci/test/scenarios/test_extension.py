"""Go unit tests of bench's k6 extension (scenarios/runner/xk6-bench), above all the cgroup layouts
this machine cannot show (a k6-operator pod on cgroup v2, with and without a cgroup namespace); the
v1 host is also run for real (test_runner.py). Run in the module scenarios/runner/build-k6.sh built k6
from (its go.sum pins k6's dependencies) with the extension replaced by this checkout's. Also
xk6-kubernetes' own tests on the copy the build patched for k6 v1 (patch-xk6-kubernetes.sh)."""
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CACHE = Path(os.environ.get("BENCH_CACHE", Path.home() / ".cache" / "bench"))


def build_dir():
    """The Go module scenarios/runner/build.sh built this checkout's k6 in (bin/k6.d/KEY/k6 -> mod/k6-build-KEY)."""
    k6 = subprocess.run(["bash", ROOT / "scenarios" / "runner" / "build.sh"], capture_output=True, text=True)
    assert k6.returncode == 0, k6.stderr
    return CACHE / "mod" / f"k6-build-{Path(k6.stdout.strip()).parent.name}"


def test_xk6_bench_unit_tests_pass(work):
    mod = work / "xk6-bench-test"
    mod.mkdir()
    build = build_dir()
    for name in ("go.mod", "go.sum", "main.go"):
        shutil.copy(build / "k6" / name, mod / name)
    edit = subprocess.run(["go", "mod", "edit", "-replace", f"bench.local/xk6-bench={ROOT}/scenarios/runner/xk6-bench"],
                          cwd=mod, capture_output=True, text=True)
    assert edit.returncode == 0, edit.stderr
    # the first run compiles k6's dependencies: minutes
    result = subprocess.run(["go", "test", "-count=1", "bench.local/xk6-bench"], cwd=mod, capture_output=True, text=True)
    assert result.returncode == 0, f"go test exit {result.returncode}:\n{result.stdout}{result.stderr}"


def test_patched_xk6_kubernetes_passes_its_own_tests(work):
    """The JS binding the patch moves to sobek is what its tests drive (a Kubernetes object built
    from JS against fake clients): they pass on the k6 the runner is built with."""
    mod = work / "xk6-kubernetes"
    build = build_dir()
    shutil.copytree(build / "xk6-kubernetes", mod)
    k6 = subprocess.run(["go", "list", "-m", "-f", "{{.Version}}", "go.k6.io/k6"], cwd=build / "k6",
                        capture_output=True, text=True, check=True).stdout.strip()
    for step in (["go", "mod", "edit", "-require", f"go.k6.io/k6@{k6}"], ["go", "mod", "tidy"],
                 ["go", "test", "-count=1", "."]):
        result = subprocess.run(step, cwd=mod, capture_output=True, text=True)
        assert result.returncode == 0, f"{' '.join(step)}: exit {result.returncode}:\n{result.stdout}{result.stderr}"

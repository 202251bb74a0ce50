"""`up` refuses bad input with a message naming the cause, and a refused `up` leaves nothing behind."""
import os
import shutil
import socket
import tempfile
from pathlib import Path

from conftest import ROOT, leftovers, output_of, run, script


def expect_refusal(cmd, want, **kwargs):
    result = run(cmd, **kwargs)
    assert result.returncode != 0, f"expected a refusal, but it succeeded:\n{output_of(result)}"
    assert want in result.stderr, f"stderr lacks {want!r}:\n{result.stderr}"


def test_up_without_root_names_the_cause(cluster):
    # A copy of ci/cluster, ci/lib, lib (the shell helpers ci/lib builds on) and ci/versions.env (the
    # pins config.sh sources) any user can read, in a folder of its own under TMPDIR (pytest's own
    # folders are 0700): the checkout may be private too (a mktemp -d clone is 0700, so is root's
    # home), and uid 65534 must get as far as up.sh's root check.
    scripts = Path(tempfile.mkdtemp(prefix="bench-cluster-scripts."))
    try:
        for part in ("ci/cluster", "ci/lib", "lib"):
            shutil.copytree(ROOT / part, scripts / part)
        shutil.copy2(ROOT / "ci" / "versions.env", scripts / "ci" / "versions.env")
        for path in [scripts, *scripts.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        expect_refusal(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "env", "HOME=/nonexistent", "bash", scripts / "ci" / "cluster" / "up.sh"], "needs root")
    finally:
        shutil.rmtree(scripts)


def test_up_with_bad_api_port_names_the_value(cluster):
    expect_refusal(script("up"), "BENCH_API_PORT='abc'", env={**os.environ, "BENCH_API_PORT": "abc"})


def test_up_with_api_port_in_use_names_port_and_variable(cluster):
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()  # listening once listen() returns: nothing to wait for
        port = listener.getsockname()[1]
        expect_refusal(script("up"), f"port {port} (BENCH_API_PORT) is in use",
                       env={**os.environ, "BENCH_API_PORT": str(port)})


def test_up_with_too_little_disk_names_the_filesystem_and_the_variable(cluster):
    """More free space asked than any disk has: refused before anything starts, naming the free
    MiB, the folder's filesystem and the variable (a full disk otherwise taints the node)."""
    expect_refusal(script("up"), "the cluster needs 100000 GiB (BENCH_MIN_FREE_GIB)",
                   env={**os.environ, "BENCH_MIN_FREE_GIB": "100000"})


def test_refused_up_leaves_nothing_behind(cluster):
    assert leftovers() == []

"""Go tests of the long-lived experiment's stream backend (backends/stream, bench-stream): each kind of
stream (ticks over HTTP/1.1 and h2c, WebSocket, gRPC through the hand-written descriptor), the 400 /
InvalidArgument answers, SIGTERM with and without a drain, the descriptor against scenarios/lib/ticks.proto.
They run in the module itself, its dependencies at the versions go.sum pins (-mod=readonly: a test
never rewrites them); the k6 runs against the real binary are in test_long_lived.py."""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MODULE = ROOT / "backends" / "stream"


def test_stream_backend_go_tests_pass():
    env = {**os.environ, "GOFLAGS": "-mod=readonly"}
    result = subprocess.run(["go", "test", "-count=1", "./..."], cwd=MODULE, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"go test exit {result.returncode}:\n{result.stdout}{result.stderr}"


def test_build_script_builds_once_then_checks_its_stamp():
    first = subprocess.run(["bash", MODULE / "build.sh"], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    binary = Path(first.stdout.strip())
    assert binary.name == "bench-stream" and os.access(binary, os.X_OK), first.stdout
    again = subprocess.run(["bash", MODULE / "build.sh"], capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout == first.stdout, again.stderr
    assert "building" not in again.stderr, f"a second build with nothing changed rebuilt:\n{again.stderr}"

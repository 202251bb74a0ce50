"""A run stopped mid-way (SIGTERM, as Kubernetes stops a runner pod) still runs teardown, which
deletes the routes it had created."""
import signal

from .conftest import wait_until


def test_stopped_run_exits_105_and_deletes_its_routes(gateway):
    proc = gateway.start_k6("stopped", "route-propagation.js", BENCH_RATE=20, BENCH_CONNECTIONS=10,
                            BENCH_ROUTE_COUNT=20, BENCH_ROUTE_INTERVAL="500ms", BENCH_DURATION="60s")
    stderr = gateway.work / "stopped" / "stderr"
    try:
        created = wait_until(60, lambda: proc.poll() is None and gateway.routes_left() >= 3, interval=0.2)
        assert created, f"the run never created 3 routes (exit {proc.poll()}):\n{stderr.read_text()[-3000:]}"
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    left = gateway.routes_left()
    # 105: k6's exit code for a run stopped by a signal.
    assert (rc, left) == (105, 0), f"exit {rc}, {left} routes left:\n{stderr.read_text()[-3000:]}"

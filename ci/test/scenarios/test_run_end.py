"""The end-of-run record's delivery decides the runner's exit code: a record Prometheus refused makes
a run that would exit 0 exit 110 (k6's "marked as failed"), after its whole summary is printed; a run
already failing keeps its own code; a delivered record changes nothing. The Prometheus stand-in is
a local HTTP server that answers every remote-write push with one status (a 400 is final, so the
runner does not retry for its 60 s bound)."""
import http.server
import threading

import pytest

MARKED_AS_FAILED = 110  # k6's exit code for a run marked as failed
THRESHOLDS_CROSSED = 99


class Receiver:
    """A remote-write endpoint answering every push with `status`; counts the pushes."""

    def __init__(self, status):
        self.pushes = 0
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.pushes += 1
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v1/write"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(request):
    r = Receiver(request.param)
    yield r
    r.close()


def describe(run):
    return f"{run}: {run.stderr[-1500:]}"


def static(k6, servers, name, receiver, rate=20):
    return k6(name, "static.js", dict(BENCH_TARGET_URL=servers.http, BENCH_RATE=rate, BENCH_DURATION="1s",
                                      BENCH_CONNECTIONS=1 if rate > 1000 else 20,
                                      K6_PROMETHEUS_RW_SERVER_URL=receiver.url))


@pytest.mark.parametrize("receiver", [400], indirect=True)
def test_refused_record_fails_a_clean_run_after_its_summary(k6, servers, receiver):
    run = static(k6, servers, "run-end-refused", receiver)
    assert run.rc == MARKED_AS_FAILED, describe(run)
    assert receiver.pushes == 1, receiver.pushes
    record = run.summary["end_record"]
    assert record["delivered"] is False and record["attempts"] == 1 and "HTTP 400" in record["error"], record
    assert "BENCH_SUMMARY_JSON_END" in run.stdout, "the summary was not printed whole before the exit"
    assert "the end-of-run record did not reach Prometheus" in run.table, run.table
    assert f"marked as failed (exit {MARKED_AS_FAILED})" in run.stderr, run.stderr[-2000:]


@pytest.mark.parametrize("receiver", [400], indirect=True)
def test_refused_record_keeps_a_failing_runs_own_code(k6, servers, receiver):
    """One VU cannot send 20,000 req/s: the dropped-iterations threshold fails the run (99)."""
    run = static(k6, servers, "run-end-refused-dropped", receiver, rate=20000)
    assert run.rc == THRESHOLDS_CROSSED, describe(run)
    assert run.summary["end_record"]["delivered"] is False


@pytest.mark.parametrize("receiver", [204], indirect=True)
def test_acknowledged_record_leaves_the_exit_code(k6, servers, receiver):
    run = static(k6, servers, "run-end-acknowledged", receiver)
    assert run.rc == 0, describe(run)
    record = run.summary["end_record"]
    assert record["delivered"] is True and record["attempts"] == 1 and receiver.pushes == 1, record

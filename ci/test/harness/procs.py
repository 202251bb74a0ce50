"""Processes a test starts and stops, and waits on readiness instead of sleeps."""
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def readable_work_dir(prefix):
    """A 0755 temporary folder, removed after: not pytest's tmp_path, whose folders are 0700, since
    nginx's workers (nobody) read the bodies kept here."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def free_port():
    """A TCP port nothing listens on at 127.0.0.1 (the kernel picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout, what, interval=0.1):
    """Calls predicate every interval until it returns something true (returned); fails after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not after {timeout} s")
        time.sleep(interval)


def port_open(port, host="127.0.0.1"):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def wait_port(port, timeout=10):
    wait_until(lambda: port_open(port), timeout, f"nothing listens on 127.0.0.1:{port}")


def tail(path, lines=30):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError as e:
        return f"({e})"


class Procs:
    """Processes started for a fixture, each with its stdout and stderr in files of log_dir; stopped
    newest first (a watch before the API server it keeps busy, the API server before etcd)."""

    def __init__(self, log_dir):
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.started = []  # (name, Popen, stdout path, stderr path)

    def start(self, name, argv, stdout=None, append=False, **kwargs):
        out = Path(stdout) if stdout else self.log_dir / f"{name}.out"
        err = self.log_dir / f"{name}.err"
        with open(out, "ab" if append else "wb") as o, open(err, "wb") as e:
            proc = subprocess.Popen([str(a) for a in argv], stdout=o, stderr=e, stdin=subprocess.DEVNULL, **kwargs)
        self.started.append((name, proc, out, err))
        return proc

    def logs(self):
        """The last lines of every process's logs, and how each ended: shown when a test fails."""
        parts = []
        for name, proc, out, err in self.started:
            state = "running" if proc.poll() is None else f"exited {proc.returncode}"
            parts.append(f"--- {name} (pid {proc.pid}, {state}) stdout:\n{tail(out)}\n--- stderr:\n{tail(err)}")
        return "\n".join(parts)

    def stop(self, proc, timeout=10):
        """SIGTERM, then SIGKILL if it is still there after timeout; returns its exit status."""
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.started = [s for s in self.started if s[1] is not proc]
        return proc.returncode

    def stop_all(self):
        for _, proc, _, _ in reversed(list(self.started)):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _, proc, _, _ in reversed(list(self.started)):
            self.stop(proc)

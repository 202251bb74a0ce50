"""A fault on one runner's remote-write traffic, nothing else: an HTTP proxy on 127.0.0.1 between a
k6 runner and the real Prometheus that forwards every push except in the windows it is given, where
it answers with the window's status itself (503: the push failed and may be retried; 400: refused
for good). Windows are seconds after the proxy's first push, so a test places them against the
runner's pushes, not against the clock of a busy machine. Prometheus itself is untouched."""
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .procs import free_port


@dataclass
class Window:
    start_s: float
    end_s: float  # float("inf"): until the proxy stops
    status: int


@dataclass
class RemoteWriteProxy:
    target: str  # Prometheus' base URL
    windows: list = field(default_factory=list)
    first: float = None
    forwarded: int = 0
    refused: int = 0

    def start(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = proxy.decide(time.monotonic())
                if status is None:
                    req = urllib.request.Request(f"{proxy.target}{self.path}", data=body, method="POST",
                                                 headers={k: v for k, v in self.headers.items()
                                                          if k.lower() not in ("host", "content-length", "connection")})
                    try:
                        with urllib.request.urlopen(req, timeout=10) as resp:
                            status = resp.status
                    except urllib.error.HTTPError as e:
                        status = e.code
                    proxy.forwarded += 1
                else:
                    proxy.refused += 1
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.port = free_port()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    def decide(self, now):
        """The status to answer with at `now`, or None to forward the push."""
        if self.first is None:
            self.first = now
        t = now - self.first
        return next((w.status for w in self.windows if w.start_s <= t < w.end_s), None)

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

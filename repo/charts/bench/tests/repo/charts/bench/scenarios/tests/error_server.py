"""Misbehaving HTTP servers on 127.0.0.1 that provoke bench's error classes for real.

Usage: error_server.py MODE PORT [CERT KEY]
  refuse  answer the first `bench-setup` request (the scenario's setup check), then close the
          listening socket: every later connect is refused (k6 error_code 1212 -> connection)
  stall   answer setup checks; read every other request and never answer (-> timeout)
  reset   answer setup checks; read every other request and reset the connection (-> read)
  tls     HTTPS with CERT and KEY until a setup check got its answer; then every connection gets
          plain HTTP where the client expects a TLS handshake (k6 1301 -> connection)
  tlscut-fin, tlscut-rst
          HTTPS until a setup check got its answer; then every connection is closed (FIN) or reset
          (RST) right after it is accepted, in the middle of the client's TLS handshake
          (-> connection, cause tls_handshake); logs `cut` per connection
  acceptreset
          plain HTTP: answers setup checks; then resets every connection as soon as it is accepted,
          without reading (-> connection when the client's connect saw it, else read); logs `reset`
  reusecut
          keep-alive HTTP: answers the first REUSE_CUT_EVERY - 1 requests of a connection and closes
          the connection after reading the next one, before any response byte: always a reused
          connection, where Go's transport would replay the GET (-> read, cause replayed); logs
          `served` and `cut` per load request
  ignoreclose
          keep-alive HTTP that ignores `Connection: close` and keeps every connection open; logs
          `conn` per load connection and `served` per load request
Setup checks are told apart by their User-Agent header, bench-setup. The log lines (stdout) are the
ground truth the tests compare bench's counts with.
"""
import socket
import ssl
import struct
import sys
import threading
import time

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"
OK_KEEPALIVE = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"
REUSE_CUT_EVERY = 3
MODES = ("refuse", "stall", "reset", "tls", "tlscut-fin", "tlscut-rst", "acceptreset", "reusecut", "ignoreclose")

_log_lock = threading.Lock()


def event(name):
    """One ground-truth line on stdout."""
    with _log_lock:
        sys.stdout.write(name + "\n")
        sys.stdout.flush()


def reset(conn):
    """Close with RST instead of FIN (SO_LINGER with a zero timeout)."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def is_setup(request):
    return b"user-agent: bench-setup" in request.lower()


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return None
        data += chunk
    return data


def handle(conn, mode, listener):
    """Serves one connection; returns True when it was a setup check that got its answer."""
    try:
        request = read_request(conn)
        if request is None:
            conn.close()
            return False
        if is_setup(request):
            if mode == "refuse":
                # Stop listening before answering: no load request can reach the backlog.
                listener.close()
            conn.sendall(OK)
            conn.close()
            return True
        if mode == "stall":
            time.sleep(3600)
        elif mode == "reset":
            reset(conn)
        else:
            conn.close()
    except OSError:
        pass
    return False


def answer_setup(conn, state):
    """Answers one request; a setup check's answer flips the server to misbehaving."""
    request = read_request(conn)
    if request is not None:
        conn.sendall(OK)
        if is_setup(request):
            state["setup_answered"] = True
    conn.close()


def misbehave_after_setup(conn, state, misbehave, context=None):
    """Serves (over TLS with a context) until a setup check got its answer, then misbehave(conn)
    for every connection, one at a time."""
    try:
        if state["setup_answered"]:
            misbehave(conn)
            return
        answer_setup(context.wrap_socket(conn, server_side=True) if context else conn, state)
    except OSError:
        pass


def not_tls(conn):
    """tls: a plain-text answer where a TLS record header must come."""
    conn.recv(4096)  # the ClientHello
    conn.sendall(OK)
    conn.close()


def cut(how):
    """tlscut-fin / tlscut-rst: close or reset right after the accept, mid-handshake."""
    def misbehave(conn):
        event("cut")
        if how == "rst":
            reset(conn)
        else:
            conn.close()
    return misbehave


def reset_at_accept(conn):
    """acceptreset: reset before reading anything."""
    event("reset")
    reset(conn)


def serve_keepalive(conn, mode):
    """reusecut and ignoreclose: requests one after another on a kept-alive connection."""
    seen = 0
    buf = b""
    counted_conn = False
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                chunk = conn.recv(4096)
                if not chunk:
                    conn.close()
                    return
                buf += chunk
            request, buf = buf.split(b"\r\n\r\n", 1)
            if is_setup(request):
                conn.sendall(OK)
                conn.close()
                return
            if mode == "ignoreclose" and not counted_conn:
                counted_conn = True
                event("conn")
            seen += 1
            if mode == "reusecut" and seen % REUSE_CUT_EVERY == 0:
                event("cut")
                conn.close()
                return
            event("served")
            conn.sendall(OK_KEEPALIVE)
    except OSError:
        pass


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode not in MODES:
        sys.exit(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
    context, state = None, {"setup_answered": False}
    if mode.startswith("tls"):
        if len(sys.argv) != 5:
            sys.exit("mode tls needs CERT and KEY")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[3], sys.argv[4])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(512)
    print(f"error_server {mode} listening on 127.0.0.1:{port}", flush=True, file=sys.stderr)
    while True:
        conn, _ = listener.accept()
        if mode == "refuse":
            # One connection at a time until the setup check got its answer, then no listener.
            if handle(conn, mode, listener):
                time.sleep(3600)  # the test stops us
            continue
        # One connection at a time: the setup check's answer flips the server for the next.
        if mode == "tls":
            misbehave_after_setup(conn, state, not_tls, context)
            continue
        if mode.startswith("tlscut-"):
            misbehave_after_setup(conn, state, cut(mode.split("-", 1)[1]), context)
            continue
        if mode == "acceptreset":
            misbehave_after_setup(conn, state, reset_at_accept)
            continue
        if mode in ("reusecut", "ignoreclose"):
            threading.Thread(target=serve_keepalive, args=(conn, mode), daemon=True).start()
            continue
        threading.Thread(target=handle, args=(conn, mode, listener), daemon=True).start()


if __name__ == "__main__":
    main()

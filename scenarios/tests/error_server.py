"""Misbehaving HTTP servers on 127.0.0.1 that provoke bench's error classes for real.

Usage: error_server.py MODE PORT [CERT KEY]
  refuse  answer the first `bench-setup` request (the scenario's setup check), then close the
          listening socket: every later connect is refused (k6 error_code 1212 -> connection)
  stall   answer setup checks; read every other request and never answer (-> timeout)
  reset   answer setup checks; read every other request and reset the connection (-> read)
  tls     HTTPS with CERT and KEY until a setup check got its answer; then every connection gets
          plain HTTP where the client expects a TLS handshake (k6 1301 -> connection)
Setup checks are told apart by their User-Agent header, bench-setup.
"""
import socket
import ssl
import struct
import sys
import threading
import time

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"


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
        if b"user-agent: bench-setup" in request.lower():
            if mode == "refuse":
                # Stop listening before answering: no load request can reach the backlog.
                listener.close()
            conn.sendall(OK)
            conn.close()
            return True
        if mode == "stall":
            time.sleep(3600)
        elif mode == "reset":
            # SO_LINGER with a zero timeout: close() sends RST instead of FIN.
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
        else:
            conn.close()
    except OSError:
        pass
    return False


def handle_tls(conn, context, state):
    """tls mode: a TLS server for the setup check, then a server that does not speak TLS."""
    try:
        if state["setup_answered"]:
            conn.recv(4096)  # the ClientHello
            conn.sendall(OK)  # a plain-text answer where a TLS record header must come
            conn.close()
            return
        tls = context.wrap_socket(conn, server_side=True)
        request = read_request(tls)
        if request is not None:
            tls.sendall(OK)
            if b"user-agent: bench-setup" in request.lower():
                state["setup_answered"] = True
        tls.close()
    except OSError:
        pass


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode not in ("refuse", "stall", "reset", "tls"):
        sys.exit(f"unknown mode {mode!r}: expected refuse, stall, reset or tls")
    context, state = None, {"setup_answered": False}
    if mode == "tls":
        if len(sys.argv) != 5:
            sys.exit("mode tls needs CERT and KEY")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[3], sys.argv[4])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(512)
    print(f"error_server {mode} listening on 127.0.0.1:{port}", flush=True)
    while True:
        conn, _ = listener.accept()
        if mode == "refuse":
            # One connection at a time until the setup check got its answer, then no listener.
            if handle(conn, mode, listener):
                time.sleep(3600)  # the test stops us
            continue
        if mode == "tls":
            # One connection at a time: the setup check's answer flips the server for the next.
            handle_tls(conn, context, state)
            continue
        threading.Thread(target=handle, args=(conn, mode, listener), daemon=True).start()


if __name__ == "__main__":
    main()

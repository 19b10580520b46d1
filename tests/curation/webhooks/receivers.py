"""A small webhook receiver on localhost (http.server in a thread) that records each request and answers with the
statuses it is told to, in order (the last one repeats); given `hold`, it answers the first request only once that
event is set (a receiver that is slow while a test stops the worker)."""

from __future__ import annotations

import socket
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def receiver(statuses: list[int] | None = None, *, hold: threading.Event | None = None):
    """Yields {'url', 'requests'}: each request as {'headers', 'body'}."""
    answers = list(statuses or [200])
    requests: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            requests.append({"headers": dict(self.headers.items()), "body": body})
            status = answers[min(len(requests) - 1, len(answers) - 1)]
            if hold is not None and len(requests) == 1:
                hold.wait(timeout=120)
            reply = f"answered {status}".encode()
            self.send_response(status)
            self.send_header("X-Receiver-Trace", f"trace-{len(requests)}")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"url": f"http://127.0.0.1:{server.server_address[1]}/hook", "requests": requests}
    finally:
        if hold is not None:
            hold.set()
        server.shutdown()
        server.server_close()


def closed_port_url() -> str:
    """A loopback URL nothing listens on (the port was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


@contextmanager
def silent_port():
    """A loopback port that accepts connections and closes them without a word (open, but not HTTP)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/hook"
    finally:
        stop.set()
        thread.join()
        server.close()

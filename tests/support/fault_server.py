"""A local OpenAI-shaped chat server that injects faults deterministically (429, 5xx, slow, malformed, 401)."""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Fault:
    """One scripted reply: status, headers, body (dict → JSON, bytes as is) and a delay before it."""

    status: int = 200
    body: dict[str, Any] | bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def completion_body(
    text: str = "ok",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 11,
    completion_tokens: int = 3,
    model: str = "fault-model",
) -> dict[str, Any]:
    """An OpenAI chat-completion body."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["content"] = None
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def ok(text: str = "ok", **kwargs: Any) -> Fault:
    """A normal answer."""
    return Fault(body=completion_body(text, **kwargs))


def rate_limited(retry_after: str | None = "1") -> Fault:
    """429, with a Retry-After header unless `retry_after` is None."""
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return Fault(status=429, body={"error": {"message": "Rate limit reached", "type": "rate_limit"}}, headers=headers)


def server_error(status: int = 500) -> Fault:
    """A 5xx (or any retryable status such as 408/409)."""
    return Fault(status=status, body={"error": {"message": f"injected {status}", "type": "server_error"}})


def slow(delay_s: float, then: Fault | None = None) -> Fault:
    """Reply late (longer than the client's timeout makes a timeout)."""
    reply = then or ok()
    return Fault(status=reply.status, body=reply.body, headers=reply.headers, delay_s=delay_s)


def malformed(body: bytes = b'{"choices": [{"message": ') -> Fault:
    """A 200 whose body is not a usable chat completion."""
    return Fault(status=200, body=body)


def unauthorized() -> Fault:
    """401 with an OpenAI-style error."""
    return Fault(status=401, body={"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})


def bad_request(message: str = "maximum context length exceeded") -> Fault:
    """400 with the server's explanation."""
    return Fault(status=400, body={"error": {"message": message, "type": "invalid_request_error"}})


class _Listener(ThreadingHTTPServer):
    daemon_threads = True
    # Many clients connect at once in the throughput benchmark; the default backlog of 5 drops some.
    request_queue_size = 256


class FaultServer:
    """Chat server in a background thread on 127.0.0.1 (random port); thread-safe scripting and counters."""

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        default: Fault | None = None,
        responder: Callable[[dict[str, Any]], Fault] | None = None,
        port: int = 0,
    ) -> None:
        self.latency_s = latency_s
        self.default = default or ok()
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        # (arrived, answered) on time.monotonic() of each chat request: how busy the endpoint's slots were.
        self.spans: list[tuple[float, float]] = []
        self._script: deque[Fault] = deque()
        self._cycle: list[Fault] = []
        self._cycle_index = 0
        self._lock = threading.Lock()
        self._httpd = _Listener(("127.0.0.1", port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """OpenAI-style base URL (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FaultServer:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fault-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def script(self, *faults: Fault) -> None:
        """Queue replies for the next requests, in order; afterwards the cycle or default applies."""
        with self._lock:
            self._script.extend(faults)

    def cycle(self, faults: Iterable[Fault]) -> None:
        """Repeat this pattern of replies for every request after the script (a deterministic fault rate)."""
        with self._lock:
            self._cycle = list(faults)
            self._cycle_index = 0

    @property
    def chat_request_count(self) -> int:
        """How many chat requests arrived."""
        with self._lock:
            return len(self.requests)

    def reset_counters(self) -> None:
        """Forget recorded requests and the in-flight maximum."""
        with self._lock:
            self.requests.clear()
            self.spans.clear()
            self.max_in_flight = self.in_flight

    def _next_fault(self, request: dict[str, Any]) -> Fault:
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.popleft()
            if self._cycle:
                fault = self._cycle[self._cycle_index % len(self._cycle)]
                self._cycle_index += 1
                return fault
        return self.responder(request) if self.responder else self.default

    def _enter(self) -> float:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return time.monotonic()

    def _leave(self, arrived: float) -> None:
        with self._lock:
            self.in_flight -= 1
            self.spans.append((arrived, time.monotonic()))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body are separate writes; with Nagle on, keep-alive replies stall ~40 ms each.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, fault: Fault) -> None:
                if isinstance(fault.body, bytes):
                    payload = fault.body
                else:
                    payload = json.dumps(fault.body if fault.body is not None else {}).encode()
                try:
                    self.send_response(fault.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in fault.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up (its timeout); nothing to answer.
                    self.close_connection = True

            def do_GET(self) -> None:
                if self.path.rstrip("/") in ("/health", "/v1/health"):
                    self._send(Fault(body={"status": "ok"}))
                elif self.path.rstrip("/") == "/v1/models":
                    self._send(Fault(body={"object": "list", "data": [{"id": "fault-model", "object": "model"}]}))
                else:
                    self._send(Fault(status=404, body={"error": {"message": "not found"}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(Fault(status=404, body={"error": {"message": "not found"}}))
                    return
                try:
                    request = json.loads(raw)
                except ValueError:
                    self._send(bad_request("request body is not JSON"))
                    return
                request["_headers"] = dict(self.headers.items())
                arrived = server._enter()
                try:
                    fault = server._next_fault(request)
                    delay = server.latency_s + fault.delay_s
                    if delay:
                        time.sleep(delay)
                finally:
                    server._leave(arrived)
                self._send(fault)

        return Handler


def main() -> None:
    """Run the fault server in the foreground with a fixed latency (for manual throughput checks)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    server = FaultServer(latency_s=args.latency, port=args.port).start()
    print(json.dumps({"base_url": server.base_url}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()

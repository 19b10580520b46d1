"""One SmolLM2 server for the whole test session, shared by every test that needs the real local model."""

from __future__ import annotations

import socket

_url: str | None = None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def local_model_url() -> str:
    """Base URL (…/v1) of the session's local model server, started on a free port the first time."""
    global _url
    if _url is None:
        from curation.endpoints.local_model import ensure_running

        _url = ensure_running(free_port(), timeout_s=180)
    return _url


def local_model_port() -> int:
    return int(local_model_url().rsplit(":", 1)[1].split("/", 1)[0])

"""The web tier (gunicorn + config.web_worker) serves ordinary requests while idle or slow clients hold sockets."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.template_database import sqlite_copy

ROOT = Path(__file__).resolve().parents[2]
WEB_TIER = ["-c", "python:config.gunicorn_conf", "config.asgi"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def web_tier(tmp_path_factory):
    """One worker process of the real shape, with short keep-alive and header deadlines."""
    data_dir = tmp_path_factory.mktemp("web-tier")
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")},
        "TATCURATE_DATA_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "TATCURATE_WEB_WORKERS": "1",
        "TATCURATE_KEEPALIVE_S": "1",
        "TATCURATE_HEADER_TIMEOUT_S": "2",
    }
    sqlite_copy(data_dir / "tatcurate.sqlite3")  # the embedded database, migrated (the suite's template)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", *WEB_TIER, "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT,
        env=env,
    )
    try:
        for _ in range(150):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        # The master accepts before its worker has loaded the app: one answered request first, so the tests time
        # a warm worker (a cold one on a busy machine outlasted their 15 s).
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=120) as response:
            assert response.status == 200
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def _partial_request(port: int) -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", port), timeout=20)
    connection.sendall(b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Never: finished")
    return connection


def test_scripts_start_serves_this_web_tier_shape():
    start = (ROOT / "scripts" / "start").read_text()
    assert "gunicorn " + " ".join(WEB_TIER) in start


def test_one_worker_answers_while_idle_and_half_sent_connections_are_open(web_tier):
    # gthread with 4 threads froze with 4 such connections: each thread blocked reading one of them.
    held = [_partial_request(web_tier) for _ in range(40)]
    held += [socket.create_connection(("127.0.0.1", web_tier), timeout=20) for _ in range(40)]
    try:
        for _ in range(5):
            with urllib.request.urlopen(f"http://127.0.0.1:{web_tier}/login/", timeout=15) as response:
                assert response.status == 200 and b"password" in response.read().lower()
    finally:
        for connection in held:
            connection.close()


def test_a_connection_that_never_finishes_its_headers_is_closed(web_tier):
    connection = _partial_request(web_tier)
    with connection:
        assert connection.recv(1024) == b""  # closed by the server (the socket timeout would raise instead)


def test_dripping_header_bytes_does_not_extend_the_deadline(web_tier):
    connection = socket.create_connection(("127.0.0.1", web_tier), timeout=20)
    closed = False
    with connection:
        connection.settimeout(0.3)
        for byte in b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: " + b"a" * 200:
            try:
                connection.send(bytes([byte]))
                if connection.recv(1024) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
            except OSError:
                closed = True
                break
    assert closed, "the server kept reading a request whose headers never completed"


def test_an_idle_kept_alive_connection_is_closed_after_its_response(web_tier):
    connection = socket.create_connection(("127.0.0.1", web_tier), timeout=20)
    with connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        received = b""
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
    assert received.startswith(b"HTTP/1.1 ")
    assert b"connection: close" not in received.lower()  # kept alive, then closed for idling


def test_the_web_tier_keeps_no_database_connection_across_requests(tmp_path):
    # gunicorn reads its configuration (and so the settings) in the master, before config.asgi is imported.
    code = (
        "import config.gunicorn_conf\nfrom config import settings\nprint(settings.DATABASES['default']['CONN_MAX_AGE'])"
    )
    env = {
        **{k: v for k, v in os.environ.items() if k != "DATABASE_CONN_MAX_AGE"},
        "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
        "TATCURATE_DATA_DIR": str(tmp_path),
    }
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"

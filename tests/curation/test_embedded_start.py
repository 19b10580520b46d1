"""The embedded start (scripts/start) is safe to share on a LAN: no debug pages, a kept secret key, plain HTTP."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from curation.env import ConfigurationError, secret_key_file

ROOT = Path(__file__).resolve().parents[2]


def test_the_secret_key_is_generated_once_private_and_kept(tmp_path):
    path = tmp_path / "data" / "secret_key"
    key = secret_key_file(path)
    assert len(key) >= 50
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert secret_key_file(path) == key
    assert [p.name for p in path.parent.iterdir()] == ["secret_key"]  # no temporary file left behind


def test_a_secret_key_file_others_can_read_is_refused(tmp_path):
    path = tmp_path / "secret_key"
    secret_key_file(path)
    path.chmod(0o644)
    with pytest.raises(ConfigurationError, match="chmod 600"):
        secret_key_file(path)


def embedded_env(data_dir: Path) -> dict[str, str]:
    """The environment scripts/start runs with (it sources scripts/embedded-env.sh)."""
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("DJANGO_") and k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")
    }
    script = f'data_dir="{data_dir}"; source scripts/embedded-env.sh; env -0'
    out = subprocess.run(["bash", "-c", script], cwd=ROOT, env=base, capture_output=True, check=True).stdout
    return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)


def test_the_start_environment_turns_debugging_off_and_serves_plain_http_to_the_lan(tmp_path):
    env = embedded_env(tmp_path)
    assert env["DJANGO_DEBUG"] == "false"
    assert env["DJANGO_SECRET_KEY_FILE"] == str(tmp_path / "secret_key")
    assert (env["DJANGO_SECURE_SSL_REDIRECT"], env["DJANGO_SECURE_COOKIES"], env["DJANGO_HSTS_SECONDS"]) == (
        "false",
        "false",
        "0",
    )
    hosts = env["DJANGO_ALLOWED_HOSTS"].split(",")
    assert {"localhost", "127.0.0.1", socket.gethostname()} <= set(hosts) and "*" not in hosts


def test_a_variable_already_set_wins_so_debugging_can_be_switched_on(tmp_path, monkeypatch):
    monkeypatch.setenv("DJANGO_DEBUG", "true")
    script = f'data_dir="{tmp_path}"; source scripts/embedded-env.sh; echo "$DJANGO_DEBUG"'
    result = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "true"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, str, dict[str, str]]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(
            url, timeout=60
        ) as response:  # the first request waits for the worker to boot: long on a busy machine
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), dict(error.headers)


def test_gunicorn_on_the_start_environment_shows_plain_pages_and_serves_static_files(tmp_path):
    env = {
        **embedded_env(tmp_path),
        "TATCURATE_DATA_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "TATCURATE_WEB_WORKERS": "1",
    }
    port = _free_port()
    gunicorn = Path(sys.executable).with_name("gunicorn")
    server = subprocess.Popen(
        [str(gunicorn), "-c", "python:config.gunicorn_conf", "config.asgi", "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        status, body, headers = _get(f"{base}/login/")
        assert status == 200, body[:500]  # plain HTTP: no redirect to https
        assert "Secure" not in headers.get("Set-Cookie", "")
        status, body, _ = _get(f"{base}/no/such/page/")
        assert status == 404
        assert "404 · Not found" in body and "URLconf" not in body and "urlpatterns" not in body
        status, body, _ = _get(f"{base}/static/app.css")
        assert status == 200 and ".topbar" in body
        status, _, _ = _get(f"{base}/static/favicon.svg")
        assert status == 200
        assert stat.S_IMODE((tmp_path / "secret_key").stat().st_mode) == 0o600
    finally:
        server.terminate()
        server.wait(timeout=20)

"""The web tier survives its database: every backend connection is killed (pg_terminate_backend, as a PostgreSQL
restart does) in the middle of traffic to the real web tier (gunicorn, ASGI, persistent connections off), and every
route keeps its status code: a signed-in person's unknown URL stays a 404 (issue 35, defect 2: its error page ran on
a thread whose connection no request signal checked, and answered 500 until the workers restarted)."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from tests.conftest import PASSWORD, postgres_only
from tests.curation.test_web_tier import ROOT, WEB_TIER, _free_port
from tests.support import workers
from tests.support.workers import wait_for

pytestmark = [postgres_only(), pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _status(port: int, path: str, cookie: str = "") -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _session_cookie(user) -> str:
    browser = Client()
    assert browser.login(username=user.username, password=PASSWORD)
    return f"sessionid={browser.cookies['sessionid'].value}"


def _terminate_every_other_backend() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def web_tier_on_the_test_database(tmp_path):
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CELERY_BROKER_URL")},
        "DATABASE_URL": workers.test_database_url(),
        "TATCURATE_DATA_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": settings.SECRET_KEY,  # the sessions signed in this process
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "TATCURATE_WEB_WORKERS": "1",
    }
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", *WEB_TIER, "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT,
        env=env,
    )
    try:
        wait_for(lambda: _status(port, "/login/") == 200 if _listening(port) else False, timeout=120, what="web")
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def _listening(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def test_every_route_keeps_its_status_when_every_database_connection_is_killed_mid_traffic(
    project, personas, web_tier_on_the_test_database
):
    port = web_tier_on_the_test_database
    manager, annotator = _session_cookie(personas["manager"]), _session_cookie(personas["annotator"])
    routes = [
        ("/", manager, 200),
        (f"/p/{project.slug}/", manager, 200),
        ("/no-such-page/", manager, 404),
        ("/p/no-such-project/", manager, 404),
        (f"/p/{project.slug}/webhooks/", annotator, 403),
        ("/api/projects/", manager, 200),
        ("/api/no-such-endpoint/", manager, 404),
        ("/no-such-page/", "", 404),
        ("/", "", 302),
    ]
    expected = [status for _, _, status in routes]
    # Several rounds, each after a kill: the error pages of a round spread over the server's threads.
    for round_number in range(4):
        assert [_status(port, path, cookie) for path, cookie, _ in routes] == expected, f"round {round_number}"
        assert [_status(port, path, cookie) for path, cookie, _ in routes * 2] == expected * 2
        _terminate_every_other_backend()  # what a PostgreSQL restart does to the server's connections

"""/healthz reports database, broker and worker reachability as JSON."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from curation.models import WorkerHeartbeat


def test_healthz_reports_database_and_broker(db, client):
    body = client.get("/healthz").json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is True
    assert body["workers"] == {"ok": False, "count": 0, "names": []}


def test_healthz_counts_only_workers_with_a_recent_heartbeat(db, client):
    now = timezone.now()
    WorkerHeartbeat.objects.create(hostname="fresh@a", started_at=now, last_seen_at=now)
    WorkerHeartbeat.objects.create(hostname="stale@b", started_at=now, last_seen_at=now - timedelta(minutes=5))
    assert client.get("/healthz").json()["workers"] == {"ok": True, "count": 1, "names": ["fresh@a"]}


def test_healthz_is_503_when_the_broker_is_unreachable(db, client, settings):
    from config.celery import app

    original = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"
    try:
        response = client.get("/healthz")
    finally:
        app.conf.broker_url = original
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False


def test_favicon_ico_leads_to_the_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith(".svg")

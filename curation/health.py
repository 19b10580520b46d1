"""/healthz: database, broker, workers and the program sandbox as JSON (503 when the database or broker is down)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from django.db import connection
from django.http import HttpRequest, JsonResponse

WORKER_STALE_SECONDS = 30


def _reached(probe: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        found = probe()
    except Exception as exc:  # any driver error means "unreachable"
        return {"ok": False, "error": str(exc)[:200]}
    return {"ok": True, **found, "ms": round((time.perf_counter() - started) * 1000, 1)}


def _database() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"vendor": connection.vendor}


def _broker() -> dict[str, Any]:
    from celery import current_app as app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
        return {"transport": str(conn.transport_cls)}


def _workers() -> dict[str, Any]:
    from datetime import timedelta

    from django.utils import timezone

    from curation.models import WorkerHeartbeat

    try:
        cutoff = timezone.now() - timedelta(seconds=WORKER_STALE_SECONDS)
        names = sorted(WorkerHeartbeat.objects.filter(last_seen_at__gte=cutoff).values_list("hostname", flat=True))
    except Exception as exc:
        return {"ok": False, "count": 0, "error": str(exc)[:200]}
    return {"ok": bool(names), "count": len(names), "names": names}


def healthz(request: HttpRequest, checks: Mapping[str, Callable[[], dict[str, Any]]] | None = None) -> JsonResponse:
    """Public on purpose (load balancers call it); says nothing beyond reachability and availability.

    `checks` (from the URLconf, which may name every app) add sections that do not decide the status.
    """
    database = _reached(_database)
    broker = _reached(_broker)
    healthy = database["ok"] and broker["ok"]
    body = {
        "status": "ok" if healthy else "unhealthy",
        "database": database,
        "broker": broker,
        # Heartbeat rows rather than a broadcast ping: the filesystem broker has no broadcast channel.
        "workers": _workers(),
        **{name: check() for name, check in (checks or {}).items()},
    }
    return JsonResponse(body, status=200 if healthy else 503)

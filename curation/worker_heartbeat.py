"""A Celery worker records that it is alive in the database every few seconds (read by /healthz)."""

from __future__ import annotations

import os
import threading

from celery.signals import worker_ready, worker_shutdown

HEARTBEAT_SECONDS = 5.0
_stop = threading.Event()


def beat(hostname: str, started_at) -> None:
    from django.db import close_old_connections
    from django.utils import timezone

    from curation.models import WorkerHeartbeat

    close_old_connections()
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname, defaults={"pid": os.getpid(), "started_at": started_at, "last_seen_at": timezone.now()}
    )


def _loop(hostname: str) -> None:
    from django.db import connection
    from django.utils import timezone

    started_at = timezone.now()
    while not _stop.is_set():
        try:
            beat(hostname, started_at)
        except Exception:  # a database hiccup must not kill the worker; the next beat retries
            connection.close()
        _stop.wait(HEARTBEAT_SECONDS)
    connection.close()


@worker_ready.connect
def start_heartbeat(sender=None, **_: object) -> None:
    hostname = getattr(sender, "hostname", None) or f"worker@{os.uname().nodename}:{os.getpid()}"
    threading.Thread(target=_loop, args=(hostname,), name="tatcurate-heartbeat", daemon=True).start()


@worker_shutdown.connect
def stop_heartbeat(**_: object) -> None:
    _stop.set()

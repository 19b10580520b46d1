"""Celery tasks of the core (thin: ids in, one service call), and the worker signals that hand back its claims."""

from __future__ import annotations

import logging
import threading

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown, worker_shutting_down
from django.db import connection

from curation.jobs import jobs_reap, jobs_release_for_worker

logger = logging.getLogger(__name__)


@shared_task(name="curation.jobs_reap", acks_late=True)
def jobs_reap_task() -> dict[str, int]:
    """Reap the stalled drafting items, scoring chunks and export builds (beat runs this every heartbeat interval)."""
    return jobs_reap()


def _hand_back(hostname: str) -> None:
    counts = jobs_release_for_worker(worker=hostname)
    handed_back = {kind: count for kind, count in counts.items() if count > 0}
    if handed_back:
        logger.info("%s handed back %s", hostname, handed_back)


@worker_ready.connect
@worker_shutdown.connect
def _hand_back_own_claims(sender: object = None, **kwargs: object) -> None:
    """A worker that starts again under its old name (kill -9, OOM, a restart) hands back at once the rows its dead
    incarnation held, of every kind, instead of leaving them to the stall reaper; one that has shut down hands back
    whatever it still holds."""
    hostname = getattr(sender, "hostname", "") or ""
    if hostname:
        _hand_back(hostname)


@worker_shutting_down.connect
def _hand_back_on_cold_shutdown(sender: object = None, how: str = "", **kwargs: object) -> None:
    """A cold shutdown abandons the tasks in progress (a warm one lets them finish): their rows are handed back now.
    This runs inside the worker's signal handler, so the work is done on a thread with its own connection."""
    if how != "Cold" or not sender:
        return

    def hand_back() -> None:
        try:
            _hand_back(str(sender))
        finally:
            connection.close()

    thread = threading.Thread(target=hand_back, name="hand-back", daemon=True)
    thread.start()
    thread.join(timeout=10)


# autodiscover_tasks() imports only `<app>.tasks`; the drafting and release tasks live in their own packages.
import curation.datasets.tasks  # noqa: E402
import curation.drafting.tasks  # noqa: E402
import curation.papers.tasks  # noqa: E402
import curation.releases.tasks  # noqa: E402
import curation.webhooks.tasks  # noqa: E402,F401

"""Celery tasks of the core (thin: ids in, one service call), and the worker signals that hand back its claims."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown

from curation.jobs import jobs_reap, jobs_release_for_worker

logger = logging.getLogger(__name__)


@shared_task(name="curation.jobs_reap", acks_late=True)
def jobs_reap_task() -> dict[str, int]:
    """Reap the stalled drafting items, scoring chunks and export builds (beat runs this every heartbeat interval)."""
    return jobs_reap()


@worker_ready.connect
@worker_shutdown.connect
def _hand_back_own_claims(sender: object = None, **kwargs: object) -> None:
    """A worker that shuts down, or starts again under its old name (kill -9, OOM, a restart), hands back the rows it
    (or its dead incarnation) held at once, of every kind, instead of leaving them to the stall reaper."""
    hostname = getattr(sender, "hostname", "") or ""
    if not hostname:
        return
    counts = jobs_release_for_worker(worker=hostname)
    handed_back = {kind: count for kind, count in counts.items() if count > 0}
    if handed_back:
        logger.info("%s handed back %s", hostname, handed_back)


# autodiscover_tasks() imports only `<app>.tasks`; the drafting and release tasks live in their own packages.
import curation.drafting.tasks  # noqa: E402
import curation.releases.tasks  # noqa: E402,F401

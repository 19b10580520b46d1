"""Celery tasks of scoring runs (thin: ids in, one service call). Chunks run under the global
CELERY_TASK_TIME_LIMIT / CELERY_TASK_SOFT_TIME_LIMIT (curation/settings.py), which stay far below the broker's
visibility timeout (3 h on Redis), so a live task is never handed to a second worker by the broker itself."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_ready
from django.conf import settings

from curation.jobs import TransactionAwareTask
from curation.transient import transient_call
from scoring.runs.chunks import run_work
from scoring.runs.reaper import runs_resume_for_worker

logger = logging.getLogger(__name__)

OUTAGE_RESEND_S = 5


@shared_task(
    name="scoring.run_chunk",
    acks_late=True,
    reject_on_worker_lost=True,
    base=TransactionAwareTask,
)
def run_chunk_task(chunk_id: int) -> str:
    """Process one chunk (and then other queued chunks of its run); a chunk held by someone else, or done, is
    skipped quietly."""
    from celery import current_task

    hostname = getattr(current_task.request, "hostname", "") or ""
    try:
        # Then the run's other queued chunks, for at most half the soft limit (see scoring.runs.chunks.run_work).
        outcomes = run_work(chunk_id=chunk_id, worker=hostname, budget_s=settings.CELERY_TASK_SOFT_TIME_LIMIT / 2)
        if outcomes[-1].startswith("outage"):
            # The chunk went back to the queue untouched; send it again once the outage has had time to pass.
            transient_call(
                run_chunk_task.apply_async,
                args=[chunk_id],
                countdown=OUTAGE_RESEND_S,
                queue=current_task.request.delivery_info.get("routing_key"),
            )
        return ", ".join(outcomes)
    except SoftTimeLimitExceeded:
        # The chunk was handed back by the service; the reaper (curation.jobs_reap) or this re-send continues it.
        run_chunk_task.apply_async(args=[chunk_id], queue=current_task.request.delivery_info.get("routing_key"))
        return "time limit: sent again"


@worker_ready.connect
def _resume_left_behind(sender: object = None, **kwargs: object) -> None:
    """A worker that restarts under the same name requeues the scoring chunks it was holding when it died."""
    hostname = getattr(sender, "hostname", "") or ""
    if not hostname:
        return
    try:
        requeued = runs_resume_for_worker(worker=hostname)
    except Exception:  # a worker must start even if the database is briefly unavailable
        logger.exception("could not requeue scoring chunks left by %s", hostname)
        return
    if requeued:
        logger.info("requeued %d scoring chunk(s) left behind by %s", requeued, hostname)

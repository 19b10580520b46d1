"""Celery tasks of scoring runs (thin: ids in, one service call). Chunks run under the global
CELERY_TASK_TIME_LIMIT / CELERY_TASK_SOFT_TIME_LIMIT (config/settings.py), which stay far below the broker's
visibility timeout (3 h on Redis), so a live task is never handed to a second worker by the broker itself."""

from __future__ import annotations

import logging

from celery import current_task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from curation.jobs import TransactionAwareTask
from curation.transient import is_transient, transient_call
from scoring.runs.chunks import run_work

logger = logging.getLogger(__name__)

OUTAGE_RESEND_S = 5


@shared_task(name="scoring.run_chunk", acks_late=True, reject_on_worker_lost=True, base=TransactionAwareTask)
def run_chunk_task(chunk_id: int) -> str:
    """Process one chunk (and then other queued chunks of its run); a chunk held by someone else, or done, is
    skipped quietly."""
    hostname = getattr(current_task.request, "hostname", "") or ""

    def send_again(*, countdown: int = 0) -> None:
        """Send the chunk again on the queue its message came by (riding out an outage of the broker)."""
        queue = current_task.request.delivery_info.get("routing_key")
        transient_call(run_chunk_task.apply_async, args=[chunk_id], countdown=countdown, queue=queue)

    try:
        # Then the run's other queued chunks, for at most half the soft limit (see scoring.runs.chunks.run_work).
        outcomes = run_work(chunk_id=chunk_id, worker=hostname, budget_s=settings.CELERY_TASK_SOFT_TIME_LIMIT / 2)
        if outcomes[-1].startswith("outage"):
            # The chunk went back to the queue untouched; send it again once the outage has had time to pass.
            send_again(countdown=OUTAGE_RESEND_S)
        return ", ".join(outcomes)
    except SoftTimeLimitExceeded:
        # The chunk was handed back by the service; the reaper (curation.jobs_reap) or this re-send continues it.
        send_again()
        return "time limit: sent again"
    except Exception as error:
        if not is_transient(error):
            raise
        # The database or broker went away outside an item (claiming, reading the chunk): nothing was recorded
        # as failed; send the chunk again once the outage has had time to pass (its row says what is left).
        logger.warning("chunk %s: outage (%s); sent again in %ss", chunk_id, error, OUTAGE_RESEND_S)
        send_again(countdown=OUTAGE_RESEND_S)
        return "outage: sent again"

"""Celery tasks of drafting (thin: ids in, one service call); the item rows make redelivery harmless."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready

from curation.drafting.services.items import chunk_process
from curation.drafting.services.reaper import runs_resume_for_worker
from curation.jobs import TransactionAwareTask

logger = logging.getLogger(__name__)


@shared_task(name="curation.drafting_chunk", acks_late=True, bind=True, base=TransactionAwareTask)
def drafting_chunk_task(self, run_id: int, chunk: int) -> int:
    """Draft one chunk of a run; items already drafted (by an earlier delivery) are skipped."""
    return chunk_process(run_id=run_id, chunk=chunk, worker=self.request.hostname or "")


@worker_ready.connect
def _resume_left_behind(sender: object = None, **kwargs: object) -> None:
    """A worker that restarts under the same name requeues the drafting chunks it was holding when it died."""
    hostname = getattr(sender, "hostname", "") or ""
    if not hostname:
        return
    try:
        requeued = runs_resume_for_worker(worker=hostname)
    except Exception:  # a worker must start even if the database is briefly unavailable
        logger.exception("could not requeue drafting work left by %s", hostname)
        return
    if requeued:
        logger.info("requeued %d drafting chunk(s) left behind by %s", requeued, hostname)

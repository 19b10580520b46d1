"""Celery tasks of drafting (thin: ids in, one service call); the item rows make redelivery harmless."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from curation.drafting.services.items import run_work
from curation.jobs import TransactionAwareTask
from curation.transient import is_transient, transient_call

logger = logging.getLogger(__name__)

# After an outage the chunk is sent again this many seconds later, once the outage has had time to pass.
OUTAGE_RESEND_S = 5


@shared_task(name="curation.drafting_chunk", acks_late=True, bind=True, base=TransactionAwareTask)
def drafting_chunk_task(self, run_id: int, chunk: int) -> int:
    """Draft one chunk of a run (and then its other unbegun chunks); items already drafted (by an earlier delivery)
    are skipped. An outage hands the chunk's items back untried (curation/transient.py) and the chunk is sent
    again."""
    try:
        # Then the run's other unbegun chunks, for at most half the soft limit (see services.items.run_work).
        budget_s = settings.CELERY_TASK_SOFT_TIME_LIMIT / 2
        return run_work(run_id=run_id, chunk=chunk, worker=self.request.hostname or "", budget_s=budget_s)
    except Exception as error:
        if not is_transient(error):
            raise
        logger.warning("drafting chunk %s of run %s: outage (%s); sent again", chunk, run_id, error)
        transient_call(
            drafting_chunk_task.apply_async,
            args=[run_id, getattr(error, "chunk", chunk)],
            countdown=OUTAGE_RESEND_S,
            queue=(self.request.delivery_info or {}).get("routing_key"),
        )
        return 0

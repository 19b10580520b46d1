"""Celery task of big dataset imports (thin: an id in, one service call); it runs on the exports queue."""

from __future__ import annotations

from celery import shared_task

from curation.datasets.jobs import dataset_import_run
from curation.jobs import TransactionAwareTask


@shared_task(name="curation.dataset_import", acks_late=True, bind=True, base=TransactionAwareTask)
def dataset_import_task(self, job_id: int) -> str:
    """Import one stored file; a redelivered task finds the job finished (or held by a live worker) and exits."""
    job = dataset_import_run(job_id=job_id, worker=self.request.hostname or "")
    return job.state if job is not None else "missing"

"""Celery task of ingestion (thin: an id in, one service call); it runs on the exports queue."""

from __future__ import annotations

from celery import shared_task

from curation.jobs import TransactionAwareTask
from curation.papers.ingestion import ingest_job_run


@shared_task(name="curation.paper_ingest", acks_late=True, bind=True, base=TransactionAwareTask)
def paper_ingest_task(self, job_id: int) -> str:
    """Read and store one upload; a redelivered task finds the job finished (or held by a live worker) and exits."""
    job = ingest_job_run(job_id=job_id, worker=self.request.hostname or "")
    return job.state if job is not None else "missing"

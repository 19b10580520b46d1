"""Celery task of ingestion (an id in, the kind's run); it runs on the exports queue."""

from __future__ import annotations

from curation.jobs import job_kind_task
from curation.papers.ingestion import INGEST_JOBS

paper_ingest_task = job_kind_task(INGEST_JOBS)

"""Celery task of big dataset imports (an id in, the kind's run); it runs on the exports queue."""

from __future__ import annotations

from curation.datasets.jobs import DATASET_IMPORTS
from curation.jobs import job_kind_task

dataset_import_task = job_kind_task(DATASET_IMPORTS)

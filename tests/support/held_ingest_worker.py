"""A Celery app for worker tests (`celery -A tests.support.held_ingest_worker`): the project's app, with ingestion
held after the job is claimed (before its child starts) while the file named by TATCURATE_TEST_INGEST_HOLD exists,
so a test can kill the worker in the middle of a job. Test-only: production code has no pause hook."""

from __future__ import annotations

import os
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from config.celery import app  # noqa: E402
from curation.papers import ingestion  # noqa: E402

__all__ = ["app"]

_read = ingestion.sources_read_bounded


def _held_read(**kwargs):
    hold = os.environ.get("TATCURATE_TEST_INGEST_HOLD", "")
    while hold and os.path.exists(hold):
        time.sleep(0.05)
    return _read(**kwargs)


ingestion.sources_read_bounded = _held_read

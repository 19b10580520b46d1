"""A Celery app for worker tests (`celery -A tests.support.held_cut_worker`): the project's app, with release cuts
frozen five instances a chunk and held before each chunk after the first while the file named by
TATCURATE_TEST_CUT_HOLD exists, so a test can kill the worker in the middle of a cut. Test-only: production code
has no pause hook."""

from __future__ import annotations

import os
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from config.celery import app  # noqa: E402
from curation.releases.services import cut as services  # noqa: E402

__all__ = ["app"]

services.ITEM_CHUNK = 5
_freeze_chunk = services._freeze_chunk
_chunks_frozen = 0


def _held_freeze_chunk(**kwargs):
    global _chunks_frozen
    hold = os.environ.get("TATCURATE_TEST_CUT_HOLD", "")
    while _chunks_frozen and hold and os.path.exists(hold):
        time.sleep(0.05)
    _chunks_frozen += 1
    return _freeze_chunk(**kwargs)


services._freeze_chunk = _held_freeze_chunk

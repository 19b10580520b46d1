"""Fixtures for the annotation side: an open batch full of drafts."""

from __future__ import annotations

import pytest

from curation.models import ReasoningType
from curation.services.batches import batch_create, batch_open


@pytest.fixture
def open_batch(project):
    return batch_open(batch_id=batch_create(project=project, actor=None, name="B1").pk, actor=None)


@pytest.fixture
def drafts(project, open_batch, make_instance):
    """Six drafts in the open batch, alternating two reasoning types."""
    types = list(ReasoningType.objects.filter(project=project, parent__isnull=False)[:2])
    return [
        make_instance(batch=open_batch, reasoning_type=types[i % 2], draft={"question": f"Draft question {i}?"})
        for i in range(6)
    ]

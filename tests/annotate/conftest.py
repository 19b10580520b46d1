"""Fixtures of the annotation tests."""

from __future__ import annotations

import pytest

from tests.annotate.qualification.support import make_gold


@pytest.fixture
def gold(project, context) -> list:
    """The four GOLD instances, validated, on the shared context (tests/annotate/qualification/support.py)."""
    return make_gold(project, context)

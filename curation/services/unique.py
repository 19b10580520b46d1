"""One rule for a taken unique value: a Conflict (409) naming the field, whether the value was taken before the
request or by another request at the same moment. The database's unique constraint decides the race; its
IntegrityError becomes the same Conflict, never a 500."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.db import IntegrityError, transaction

from curation.errors import Conflict

T = TypeVar("T")


def create_unique(create: Callable[[], T], *, taken: Callable[[], bool], field: str, message: str) -> T:
    """`create()` in a savepoint unless `taken()`; a unique violation whose value is then taken is a Conflict on
    `field` (any other integrity error is raised as it is)."""
    if taken():
        raise Conflict(message, detail={"field": field})
    try:
        with transaction.atomic():
            return create()
    except IntegrityError:
        if taken():
            raise Conflict(message, detail={"field": field}) from None
        raise

"""Writes for batches: managers create and open them."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from curation.errors import Conflict, InvalidInput, NotFound
from curation.models import Batch, Project
from curation.services.projects import require_role
from curation.states import Role


@transaction.atomic
def batch_create(*, project: Project, actor: AbstractBaseUser | None, name: str) -> Batch:
    """A new planned batch at the end of the project's batch order. Managers only."""
    if actor is not None:
        require_role(user=actor, project=project, roles=(Role.MANAGER,), action="create batches")
    name = name.strip()
    if not name:
        raise InvalidInput("A batch needs a name.")
    last = Batch.objects.filter(project=project).aggregate(order=Max("order"))["order"]
    return Batch.objects.create(project=project, name=name, order=0 if last is None else last + 1)


@transaction.atomic
def batch_deadline_set(
    *, batch_id: int, actor: AbstractBaseUser | None, deadline_at: datetime | None, now: datetime | None = None
) -> Batch:
    """Set (or clear, with None) a batch's deadline. Managers only (`actor=None` is an operator command); a new
    deadline must be in the future and timezone-aware."""
    batch = Batch.objects.select_related("project").filter(pk=batch_id).first()
    if batch is None:
        raise NotFound(f"Batch {batch_id} does not exist.")
    if actor is not None:
        require_role(user=actor, project=batch.project, roles=(Role.MANAGER,), action="set batch deadlines")
    if deadline_at is not None:
        if timezone.is_naive(deadline_at):
            message = "A deadline needs a time zone (e.g. 2027-01-15T17:00Z)."
            raise InvalidInput(message, detail={"field": "deadline_at"})
        if deadline_at <= (now or timezone.now()):
            raise InvalidInput("A deadline must be in the future.", detail={"field": "deadline_at"})
    Batch.objects.filter(pk=batch.pk).update(deadline_at=deadline_at)
    batch.deadline_at = deadline_at
    return batch


@transaction.atomic
def batch_open(*, batch_id: int, actor: AbstractBaseUser | None) -> Batch:
    """Open a planned batch for annotation (exactly once). Managers only."""
    batch = Batch.objects.select_related("project").get(pk=batch_id)
    if actor is not None:
        require_role(user=actor, project=batch.project, roles=(Role.MANAGER,), action="open batches")
    updated = Batch.objects.filter(pk=batch_id, state=Batch.State.PLANNED).update(
        state=Batch.State.OPEN, opened_at=timezone.now()
    )
    if updated != 1:
        raise Conflict(f"Batch {batch.name!r} is {batch.state}, not planned.")
    batch.refresh_from_db()
    return batch

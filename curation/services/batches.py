"""Writes for batches: managers create and open them."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from curation.errors import Conflict, InvalidInput
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

"""Actions on instances: discard and restore one, and the instance browser's bulk actions (managers only; re-typing
and assigning many are core services that `instances_bulk` calls)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from curation.errors import InvalidInput, NotFound
from curation.models import Batch, Instance, Project
from curation.services.assignments import instances_assign
from curation.services.instances import instances_retype
from curation.services.lifecycle import instance_transition
from curation.services.projects import require_role
from curation.states import Role, Status


@transaction.atomic
def instances_discard(*, project: Project, actor: AbstractBaseUser, instance_ids: list[int], reason: str) -> int:
    """Discard the chosen instances (nothing is deleted) through the lifecycle, each with its audit row.

    If one of them cannot be discarded (released already, or changed by someone meanwhile) none is."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="discard instances")
    reason = reason.strip()
    if not reason:
        raise InvalidInput("Say why these instances are discarded.", detail={"field": "reason"})
    ids = sorted(set(instance_ids))
    if not ids:
        raise InvalidInput("Choose the instances to discard.")
    rows = list(Instance.objects.filter(project=project, pk__in=ids).values("pk", "status", "version"))
    if len(rows) != len(ids):
        found = {row["pk"] for row in rows}
        raise NotFound(f"No instance {', '.join(f'#{i}' for i in ids if i not in found)} in this project.")
    released = [f"#{row['pk']}" for row in rows if row["status"] == Status.RELEASED]
    if released:
        raise InvalidInput(f"Released instances stay in their release: {', '.join(released[:10])}.")
    discarded = 0
    for row in rows:
        if row["status"] != Status.DISCARDED:
            instance_discard(instance_id=row["pk"], actor=actor, expected_version=row["version"], reason=reason)
            discarded += 1
    return discarded


def instances_bulk(
    *,
    project: Project,
    actor: AbstractBaseUser,
    action: str,
    instance_ids: list[int],
    assignee: str | None = None,
    reasoning_type: int | None = None,
    reason: str = "",
) -> int:
    """The instance browser's bulk action (its page and API alike): assign drafts to an annotator or give them back to
    everyone, change the reasoning type, or discard. Returns how many instances changed."""
    if action in ("assign", "unassign"):
        assignee = assignee if action == "assign" else None
        return instances_assign(project=project, actor=actor, instance_ids=instance_ids, assignee_username=assignee)
    if action == "retype":
        return instances_retype(
            project=project, actor=actor, instance_ids=instance_ids, reasoning_type_id=reasoning_type
        )
    return instances_discard(project=project, actor=actor, instance_ids=instance_ids, reason=reason)


@transaction.atomic
def instance_discard(*, instance_id: int, actor: AbstractBaseUser, expected_version: int, reason: str) -> Instance:
    """A manager takes an instance out of the work (nothing is deleted); a concurrent action makes this a Conflict."""
    reason = reason.strip()
    if not reason:
        raise InvalidInput("Say why the instance is discarded.")
    return instance_transition(
        instance_id=instance_id,
        target=Status.DISCARDED,
        actor=actor,
        expected_version=expected_version,
        reason=f"discarded: {reason}",
    )


@transaction.atomic
def instance_restore(*, instance_id: int, actor: AbstractBaseUser, expected_version: int, reason: str = "") -> Instance:
    """A manager brings a discarded instance back as a draft with its content; its batch reopens if it had closed."""
    instance = instance_transition(
        instance_id=instance_id,
        target=Status.DRAFTED,
        actor=actor,
        expected_status=Status.DISCARDED,
        expected_version=expected_version,
        reason=f"restored{': ' + reason.strip() if reason.strip() else ''}",
        assignments={"author_id": None, "round1_verifier_id": None, "round2_reviewer_id": None},
    )
    if instance.batch_id:
        Batch.objects.filter(pk=instance.batch_id, state=Batch.State.CLOSED).update(state=Batch.State.OPEN)
    return instance

"""Direct assignment: a manager gives drafts to one qualified annotator, whose queue then serves them first."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from curation.errors import Conflict, InvalidInput, NotFound
from curation.models import Instance, Membership, Project
from curation.services.projects import require_role
from curation.states import Role, Status


def assignee_get(*, project: Project, username: str) -> AbstractBaseUser:
    """The qualified annotator of `project` called `username`; anyone else is refused with the reason."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise InvalidInput(f"There is no user called {username!r}.", detail={"field": "assignee"})
    membership = Membership.objects.filter(user=user, project=project, role=Role.ANNOTATOR).first()
    if membership is None:
        raise InvalidInput(f"{username} is not an annotator of this project.", detail={"field": "assignee"})
    if not membership.is_qualified:
        raise InvalidInput(f"{username} has not passed the qualification exam yet.", detail={"field": "assignee"})
    return user


@transaction.atomic
def instances_assign(
    *, project: Project, actor: AbstractBaseUser, instance_ids: Iterable[int], assignee_username: str | None
) -> int:
    """Assign drafts to a qualified annotator (or, with no username, give them back to everyone). Managers only.

    Only drafted instances can be assigned; if any chosen instance is not a draft of this project nothing is
    written. A claim racing the assignment makes it a Conflict (the whole assignment rolls back).
    """
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="assign work")
    ids = sorted(set(instance_ids))
    if not ids:
        raise InvalidInput("Choose the drafts to assign.")
    assignee = assignee_get(project=project, username=assignee_username) if assignee_username else None
    found = dict(Instance.objects.filter(project=project, pk__in=ids).values_list("pk", "status"))
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"No instance {', '.join(f'#{i}' for i in missing)} in this project.")
    not_drafts = [f"#{pk} is {status}" for pk, status in sorted(found.items()) if status != Status.DRAFTED]
    if not_drafts:
        raise InvalidInput(f"Only drafts can be assigned: {'; '.join(not_drafts[:10])}.")
    updated = Instance.objects.filter(project=project, pk__in=ids, status=Status.DRAFTED).update(
        assigned_to=assignee, updated_at=timezone.now()
    )
    if updated != len(ids):
        raise Conflict("Some of these drafts were claimed meanwhile; reload and assign again.")
    return updated

"""A new project's first gold, built from drafts a manager validates.

A project whose exam has no gold cannot qualify anyone, and round two needs a qualified annotator. Besides vouching
and importing gold, a manager may check drafts against their tables, correct them and validate them as gold: the
move `drafted → validated` of the transition table (managers only, never by the draft's author), whose effect puts
the item into the exam's gold pool. Release cuts withhold that pool, so an item validated by one person is an exam
item, not a released one, unless a manager includes the pool in a cut.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max, QuerySet

from annotate.qualification.models import QualificationItem, QualificationSettings
from curation.errors import Conflict, NotFound
from curation.models import Instance, Project
from curation.services.instances import edit_apply
from curation.services.lifecycle import instance_transition
from curation.services.projects import require_role
from curation.states import Role, Status


def drafts_to_validate(project: Project) -> QuerySet[Instance]:
    """Drafts nobody holds, oldest first: what a manager may check and validate as gold (never a probe)."""
    return (
        Instance.objects.without_probes()
        .filter(project=project, status=Status.DRAFTED)
        .select_related("context__paper", "reasoning_type")
        .order_by("id")
    )


def instance_of(project: Project, pk: int) -> Instance | None:
    """An instance of the project as the first-gold pages see it (never a probe)."""
    return Instance.objects.without_probes().filter(project=project, pk=pk).first()


@transaction.atomic
def gold_validate(
    *, project: Project, actor: AbstractBaseUser, instance_id: int, expected_version: int, fields: dict[str, Any]
) -> Instance:
    """Save the manager's corrections of a draft and validate it as exam gold, or change nothing: an incomplete
    item is refused with its problems (the guard of the move), a draft taken or changed meanwhile is a Conflict."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="validate drafts as exam gold")
    instance = drafts_to_validate(project).select_for_update(of=("self",)).filter(pk=instance_id).first()
    if instance is None:
        if instance_of(project, instance_id) is not None:
            raise Conflict(f"#{instance_id} is no longer a draft nobody holds; only such drafts become first gold.")
        raise NotFound(f"No draft #{instance_id} in this project.")
    instance = edit_apply(
        instance=instance,
        actor=actor,
        expected_version=expected_version,
        fields=fields,
        kind="edit",
        note="checked by a manager as exam gold",
    )
    return instance_transition(
        instance_id=instance.pk,
        target=Status.VALIDATED,
        actor=actor,
        expected_status=Status.DRAFTED,
        expected_version=instance.version,
        reason="validated as exam gold by a manager",
    )


def exam_gold_pooled(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """Effect of `drafted → validated`: the item joins the end of the project's exam pool."""
    exam, _ = QualificationSettings.objects.get_or_create(project_id=instance.project_id)
    last = exam.item_links.aggregate(order=Max("order"))["order"]
    QualificationItem.objects.get_or_create(
        settings=exam, instance_id=instance.pk, defaults={"order": 0 if last is None else last + 1}
    )

"""A manager's vouch: the first annotators of a new project qualified by a recorded decision (who, when, why)
instead of the exam, which needs gold the project does not have yet. Revoking the vouch takes back the
qualification it gave; an annotator who was qualified already keeps theirs. A vouch never lifts a hidden-gold pause:
the dashboard's Restore does, so the pause and what ended it stay in one list of decisions."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotate.qualification.models import Vouch
from annotate.quality.selectors import pause_of
from curation.errors import Conflict, InvalidInput, NotFound
from curation.models import Membership, Project
from curation.services.projects import require_role
from curation.states import Role

REASON_MAX = 500


def require_manager(*, project: Project, actor: AbstractBaseUser) -> None:
    """Vouching and revoking are a manager's (NotPermitted otherwise)."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="vouch for annotators or revoke a vouch")


@transaction.atomic
def vouch_create(*, project: Project, actor: AbstractBaseUser, user_id: int, reason: str) -> Vouch:
    """Qualify an annotator of `project` on a manager's word, recorded with the reason. Managers only; an annotator
    paused by hidden gold is refused (a restore on the dashboard takes a pause back, recorded beside it)."""
    require_manager(project=project, actor=actor)
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("Say why you vouch for this annotator.", detail={"field": "reason"})
    if len(reason) > REASON_MAX:
        raise InvalidInput(f"A reason has at most {REASON_MAX} characters.", detail={"field": "reason"})
    membership = (
        Membership.objects.select_for_update()
        .select_related("user")
        .filter(project=project, user_id=user_id, role=Role.ANNOTATOR)
        .first()
    )
    if membership is None:
        raise InvalidInput("Only an annotator of this project can be vouched for.", detail={"field": "user"})
    if pause_of(project=project, user=membership.user) is not None:
        raise InvalidInput(
            f"{membership.user.username} is paused by hidden gold, and a vouch does not lift a pause: restore them "
            "on the Dashboard, under Hidden gold.",
            detail={"field": "user"},
        )
    gave = not membership.is_qualified
    try:
        with transaction.atomic():
            vouch = Vouch.objects.create(
                project=project, user_id=user_id, vouched_by=actor, reason=reason, gave_qualification=gave
            )
    except IntegrityError as exc:
        raise Conflict(f"{membership.user.username} is vouched for already.") from exc
    if gave:
        membership.is_qualified = True
        membership.qualified_at = vouch.created_at
        membership.save(update_fields=["is_qualified", "qualified_at"])
    return vouch


@transaction.atomic
def vouch_revoke(*, project: Project, actor: AbstractBaseUser, vouch_id: int) -> Vouch:
    """Withdraw a standing vouch; the qualification it gave goes with it. Managers only."""
    require_manager(project=project, actor=actor)
    vouch = Vouch.objects.select_for_update().filter(project=project, pk=vouch_id).first()
    if vouch is None:
        raise NotFound(f"No vouch {vouch_id} in this project.")
    if vouch.revoked_at is not None:
        raise Conflict("This vouch is revoked already.")
    vouch.revoked_at = timezone.now()
    vouch.revoked_by = actor
    vouch.save(update_fields=["revoked_at", "revoked_by"])
    if vouch.gave_qualification:
        Membership.objects.filter(project=project, user_id=vouch.user_id, role=Role.ANNOTATOR).update(
            is_qualified=False, qualified_at=None
        )
    return vouch


def standing_vouches(*, project: Project) -> QuerySet[Vouch]:
    """The project's vouches not revoked, with who gave them (for a caller that has checked the viewer is a
    manager): the members page and the dashboard show them."""
    return Vouch.objects.filter(project=project, revoked_at=None).select_related("user", "vouched_by").order_by("user")

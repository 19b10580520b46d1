"""The one function that changes an instance's status: table check, role check, compare-and-set, audit row."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from curation.errors import Conflict, InvalidInput, NotFound, NotPermitted
from curation.models import Instance, Membership, TransitionEvent
from curation.states import (
    ANYONE,
    AUTHOR,
    NOT_AUTHOR,
    ROUND1_VERIFIER,
    ROUND2_REVIEWER,
    SYSTEM_TRANSITIONS,
    TRANSITION_TABLE,
    Role,
    Status,
    Transition,
)

# Called after every transition inside its transaction, as hook(instance, source, target); apps register
# follow-ups here (e.g. batch gating) so they happen whichever entry point moved the instance.
_AFTER_TRANSITION: list[Callable[[Instance, str, str], None]] = []


def on_transition(hook: Callable[[Instance, str, str], None]) -> Callable[[Instance, str, str], None]:
    """Register `hook` to run after every transition (used as a decorator from an AppConfig.ready)."""
    if hook not in _AFTER_TRANSITION:
        _AFTER_TRANSITION.append(hook)
    return hook


# Fields a transition may set besides status/version (assignment of people and leases).
_ASSIGNABLE = {"author_id", "round1_verifier_id", "round2_reviewer_id", "lease_expires_at"}


def _check_actor(transition: Transition, instance: Instance, actor: AbstractBaseUser) -> dict[str, Any]:
    """Refuse an actor without the role, qualification or relation; return the assignments the move implies."""
    memberships = list(Membership.objects.filter(user=actor, project_id=instance.project_id, role__in=transition.roles))
    if not memberships:
        roles = " or ".join(sorted(transition.roles))
        raise NotPermitted(f"Only a {roles} of this project may {transition.description}.")
    if transition.requires_qualification and not any(m.is_qualified or m.role != Role.ANNOTATOR for m in memberships):
        raise NotPermitted(f"You must pass the qualification exam before you can {transition.description}.")

    actor_id = actor.pk
    assignments: dict[str, Any] = {}
    relation = transition.relation
    if relation == AUTHOR:
        if instance.author_id != actor_id:
            raise NotPermitted(f"Only the annotator who holds this instance may {transition.description}.")
    elif relation == NOT_AUTHOR:
        if instance.author_id == actor_id:
            raise NotPermitted("Nobody reviews their own work: you are the author of this instance.")
        if instance.round1_verifier_id not in (None, actor_id):
            raise NotPermitted("This instance returns to the verifier who reviewed it before.")
        assignments["round1_verifier_id"] = actor_id
    elif relation == ROUND1_VERIFIER:
        if instance.round1_verifier_id != actor_id:
            raise NotPermitted(f"Only the round-one verifier of this instance may {transition.description}.")
    elif relation == ROUND2_REVIEWER:
        if actor_id in (instance.author_id, instance.round1_verifier_id):
            raise NotPermitted("Round two must be done by someone other than the author and the round-one verifier.")
        if instance.round2_reviewer_id not in (None, actor_id):
            raise NotPermitted("Another annotator is already reviewing this instance in round two.")
        assignments["round2_reviewer_id"] = actor_id
    elif relation != ANYONE:  # pragma: no cover - the table only uses the relations above
        raise NotPermitted(f"Unknown relation {relation!r}.")

    if transition.source == Status.DRAFTED and transition.target == Status.IN_REFINEMENT:
        assignments["author_id"] = actor_id
    return assignments


@transaction.atomic
def instance_transition(
    *,
    instance_id: int,
    target: str,
    actor: AbstractBaseUser | None,
    expected_status: str | None = None,
    expected_version: int | None = None,
    reason: str = "",
    assignments: dict[str, Any] | None = None,
) -> Instance:
    """Move an instance to `target` if the table, the actor's role and relation allow it; exactly one row changes.

    `actor=None` is a background job and may only perform the system transitions (lease expiry, release).
    A concurrent change (status or version no longer as expected) raises Conflict and writes nothing.
    """
    instance = Instance.objects.filter(pk=instance_id).first()
    if instance is None:
        raise NotFound(f"Instance {instance_id} does not exist.")
    if target not in Status.values:
        raise InvalidInput(f"{target!r} is not a status; expected one of {', '.join(Status.values)}.")
    source = expected_status or instance.status
    version = expected_version if expected_version is not None else instance.version
    if source != instance.status or version != instance.version:
        raise Conflict(
            f"This instance changed meanwhile (it is now {instance.status}, version {instance.version}).",
            detail={"status": instance.status, "version": instance.version},
        )
    transition = TRANSITION_TABLE.get((source, target))
    if transition is None:
        raise InvalidInput(f"An instance cannot go from {source} to {target}.")

    extra = dict(assignments or {})
    if set(extra) - _ASSIGNABLE:
        raise InvalidInput(f"Unexpected assignment fields: {sorted(extra)}.")
    if actor is None:
        if (source, target) not in SYSTEM_TRANSITIONS:
            raise NotPermitted(f"A background job may not move an instance from {source} to {target}.")
    else:
        extra.update(_check_actor(transition, instance, actor))
    if target == Status.DRAFTED and source == Status.IN_REFINEMENT:
        extra.setdefault("author_id", None)
    if target not in (Status.IN_REFINEMENT, Status.ROUND1_REVIEW, Status.ROUND2_REVIEW):
        extra.setdefault("lease_expires_at", None)

    updated = Instance.objects.filter(pk=instance_id, status=source, version=version).update(
        status=target, version=F("version") + 1, updated_at=timezone.now(), **extra
    )
    if updated != 1:
        current = Instance.objects.filter(pk=instance_id).values("status", "version").first() or {}
        raise Conflict(
            "Someone else acted on this instance first; reload to see its current state.",
            detail=current,
        )
    TransitionEvent.objects.create(
        instance_id=instance_id,
        actor=actor,
        from_status=source,
        to_status=target,
        version=version + 1,
        reason=reason,
    )
    instance.refresh_from_db()
    for hook in _AFTER_TRANSITION:
        hook(instance, source, target)
    return instance


@transaction.atomic
def instance_create(
    *,
    project_id: int,
    actor: AbstractBaseUser | None,
    initial_status: str = Status.DRAFTED,
    reason: str = "",
    **fields: Any,
) -> Instance:
    """Create an instance in its first status (drafted, or validated for imported gold data) with an audit row."""
    if initial_status not in (Status.DRAFTED, Status.VALIDATED):
        raise InvalidInput(f"A new instance starts as drafted or validated, not {initial_status}.")
    relevant_tables = fields.pop("relevant_tables", None)
    instance = Instance.objects.create(project_id=project_id, status=initial_status, version=1, **fields)
    if relevant_tables:
        instance.relevant_tables.set(relevant_tables)
    TransitionEvent.objects.create(
        instance=instance, actor=actor, from_status="", to_status=initial_status, version=1, reason=reason
    )
    return instance

"""The annotators' queue: an atomic claim that never gives one instance to two people, and lease upkeep."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.utils import timezone

from curation.errors import Conflict, NotPermitted
from curation.models import Batch, Instance, Membership, Project, TransitionEvent
from curation.services.lifecycle import instance_transition
from curation.states import Role, Status

CANDIDATES_PER_TRY = 25
CLAIM_TRIES = 8
RECENT_CLAIMS_FOR_SPREAD = 20


def lease_deadline() -> timezone.datetime:
    return timezone.now() + timedelta(minutes=settings.TATCURATE_LEASE_MINUTES)


def _require_qualified_annotator(*, project: Project, user: AbstractBaseUser) -> None:
    membership = Membership.objects.filter(user=user, project=project, role=Role.ANNOTATOR).first()
    if membership is None:
        raise NotPermitted("Only annotators of this project have a work queue.")
    if not membership.is_qualified:
        raise NotPermitted("Pass the qualification exam first; then drafts are yours to claim.")


def _recent_type_counts(*, project: Project, user: AbstractBaseUser) -> Counter:
    """How often each reasoning type appeared among the user's latest claims (to spread types)."""
    recent = (
        TransitionEvent.objects.filter(
            actor=user, instance__project=project, to_status=Status.IN_REFINEMENT, from_status=Status.DRAFTED
        )
        .order_by("-id")
        .values_list("instance__reasoning_type_id", flat=True)[:RECENT_CLAIMS_FOR_SPREAD]
    )
    return Counter(recent)


def _pick_candidates(*, project: Project, excluded: set[int]) -> list[Instance]:
    """Drafted instances of the earliest open batch that has any; on PostgreSQL rows others hold are skipped."""
    qs = Instance.objects.filter(project=project, status=Status.DRAFTED, batch__state=Batch.State.OPEN).exclude(
        pk__in=excluded
    )
    if connection.vendor == "postgresql":
        qs = qs.select_for_update(skip_locked=True, of=("self",))
    return list(
        qs.order_by("batch__order", "batch_id", "id").only("id", "version", "batch_id", "reasoning_type_id")[
            :CANDIDATES_PER_TRY
        ]
    )


def queue_next(*, project: Project, user: AbstractBaseUser) -> Instance | None:
    """The annotator's next instance: their active lease, else their change requests, else a fresh claim.

    The claim is one compare-and-set UPDATE (through the lifecycle function); losing a race moves on to
    the next candidate, so no instance is ever held by two annotators. Returns None when nothing is left.
    Expired leases are returned by the periodic reaper (annotate.leases_reap, every minute), not here,
    so a claim stays a handful of queries.
    """
    _require_qualified_annotator(project=project, user=user)

    # One query for what the annotator already has: a held lease first, then work sent back to them.
    mine = list(
        Instance.objects.filter(
            project=project, author=user, status__in=(Status.IN_REFINEMENT, Status.CHANGES_REQUESTED)
        ).order_by("updated_at", "id")
    )
    held = next((i for i in mine if i.status == Status.IN_REFINEMENT), None)
    if held is not None:
        return lease_renew(instance_id=held.pk, user=user) or held

    for returned in mine:
        try:
            return instance_transition(
                instance_id=returned.pk,
                target=Status.IN_REFINEMENT,
                actor=user,
                expected_status=Status.CHANGES_REQUESTED,
                expected_version=returned.version,
                reason="resume requested changes",
                assignments={"lease_expires_at": lease_deadline()},
            )
        except Conflict:
            continue

    spread = _recent_type_counts(project=project, user=user)
    lost: set[int] = set()
    for _ in range(CLAIM_TRIES):
        with transaction.atomic():
            candidates = _pick_candidates(project=project, excluded=lost)
            if not candidates:
                return None
            first_batch = candidates[0].batch_id
            same_batch = [c for c in candidates if c.batch_id == first_batch]
            for candidate in sorted(same_batch, key=lambda c: (spread[c.reasoning_type_id], c.pk)):
                try:
                    return instance_transition(
                        instance_id=candidate.pk,
                        target=Status.IN_REFINEMENT,
                        actor=user,
                        expected_status=Status.DRAFTED,
                        expected_version=candidate.version,
                        reason="claimed from the queue",
                        assignments={"lease_expires_at": lease_deadline()},
                    )
                except Conflict:
                    lost.add(candidate.pk)
    return None


def lease_renew(*, instance_id: int, user: AbstractBaseUser) -> Instance | None:
    """Extend the holder's lease (activity keeps it alive); None when the user no longer holds it."""
    updated = Instance.objects.filter(pk=instance_id, author=user, status=Status.IN_REFINEMENT).update(
        lease_expires_at=lease_deadline()
    )
    return Instance.objects.get(pk=instance_id) if updated else None


def queue_counts(*, project: Project, user: AbstractBaseUser) -> dict[str, int]:
    """What waits for this annotator: open drafts, their change requests, what they hold."""
    mine = Instance.objects.filter(project=project, author=user)
    return {
        "available": Instance.objects.filter(
            project=project, status=Status.DRAFTED, batch__state=Batch.State.OPEN
        ).count(),
        "changes_requested": mine.filter(status=Status.CHANGES_REQUESTED).count(),
        "held": mine.filter(status=Status.IN_REFINEMENT).count(),
        "submitted": mine.exclude(
            status__in=(Status.DRAFTED, Status.IN_REFINEMENT, Status.CHANGES_REQUESTED, Status.DISCARDED)
        ).count(),
    }

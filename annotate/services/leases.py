"""Leases: an expired claim goes back to the queue, and the work saved under it is kept as a revision."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from curation.errors import Conflict
from curation.models import Instance
from curation.services.instances import revision_record
from curation.services.lifecycle import instance_transition
from curation.states import Status


def lease_return_target(instance: Instance) -> str:
    """Where an expired lease sends an instance: back to its author's change list, the review pile, or the queue."""
    if instance.status == Status.ROUND1_REVIEW:
        return Status.SUBMITTED
    if instance.status == Status.ROUND2_REVIEW:
        return Status.ROUND2_REVIEW  # same status, reviewer released
    return Status.CHANGES_REQUESTED if instance.round1_verifier_id else Status.DRAFTED


def leases_reap(*, now: datetime | None = None) -> int:
    """Return every expired lease to the queue; safe to run concurrently (a lost race is skipped)."""
    now = now or timezone.now()
    expired = Instance.objects.filter(
        status__in=(Status.IN_REFINEMENT, Status.ROUND1_REVIEW, Status.ROUND2_REVIEW), lease_expires_at__lt=now
    ).only("id", "status", "version", "round1_verifier_id", "round2_reviewer_id")
    returned = 0
    for instance in expired:
        try:
            with transaction.atomic():
                if instance.status == Status.IN_REFINEMENT:
                    revision_record(instance=instance, author=None, kind="lease-expired")
                if instance.status == Status.ROUND2_REVIEW and instance.round2_reviewer_id is None:
                    continue
                instance_transition(
                    instance_id=instance.pk,
                    target=lease_return_target(instance),
                    actor=None,
                    expected_status=instance.status,
                    expected_version=instance.version,
                    reason="lease expired",
                    assignments={"round2_reviewer_id": None} if instance.status == Status.ROUND2_REVIEW else None,
                )
            returned += 1
        except Conflict:
            continue  # the holder acted (or another reaper ran) in the meantime
    return returned

"""Leases: where an expired lease goes, written once, and the periodic reaper that is its only caller at scale."""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from curation.errors import Conflict, InvalidInput
from curation.models import Instance
from curation.services.instances import revision_record
from curation.services.lifecycle import instance_is_resumed, instance_transition
from curation.states import LEASED_STATUSES, Status

logger = logging.getLogger(__name__)


def lease_return_target(instance: Instance) -> str:
    """Where an expired lease sends an instance, for every status that holds one: refinement of a draft → drafted,
    refinement of resumed changes → changes_requested (back to its author), round one → submitted, round two →
    round2_review with the reviewer released."""
    if instance.status == Status.IN_REFINEMENT:
        return Status.CHANGES_REQUESTED if instance_is_resumed(instance_id=instance.pk) else Status.DRAFTED
    if instance.status == Status.ROUND1_REVIEW:
        return Status.SUBMITTED
    if instance.status == Status.ROUND2_REVIEW:
        return Status.ROUND2_REVIEW
    raise InvalidInput(f"An instance that is {instance.status} holds no lease.")


@transaction.atomic
def lease_expire(*, instance: Instance) -> bool:
    """Return one expired lease: move the instance where `lease_return_target` says (a system transition), then
    keep refinement work as a revision. False when there was nothing to return; Conflict when the
    holder acted meanwhile."""
    if instance.status == Status.ROUND2_REVIEW and instance.round2_reviewer_id is None:
        return False
    # The move comes first: its compare-and-set takes the row, so a holder's autosave either lands before (and the
    # stale version makes this a quiet Conflict) or waits and then answers 409 — never a clash of revision numbers.
    was_refining = instance.status == Status.IN_REFINEMENT
    instance_transition(
        instance_id=instance.pk,
        target=lease_return_target(instance),
        actor=None,
        expected_status=instance.status,
        expected_version=instance.version,
        reason="lease expired",
        assignments={"round2_reviewer_id": None, "lease_expires_at": None}
        if instance.status == Status.ROUND2_REVIEW
        else None,
    )
    if was_refining:
        revision_record(instance=Instance.objects.get(pk=instance.pk), author=None, kind="lease-expired")
    return True


def leases_reap(*, now: datetime | None = None) -> int:
    """Return every expired lease (run by beat every minute; requests never call it). A row that cannot be moved
    is logged and skipped, never the end of the run; a lost race (the holder acted) is skipped quietly."""
    now = now or timezone.now()
    expired = Instance.objects.filter(status__in=LEASED_STATUSES, lease_expires_at__lt=now).only(
        "id", "status", "version", "project_id", "author_id", "round1_verifier_id", "round2_reviewer_id"
    )
    returned = 0
    for instance in expired:
        try:
            returned += lease_expire(instance=instance)
        except Conflict:
            continue
        except Exception:  # one bad row must not keep every other lease from returning
            logger.exception("Could not return the expired lease on instance %s (%s)", instance.pk, instance.status)
    return returned

"""Batch flow on the annotation side: sequential gating, grouping drafts into batches, discard/restore, pay settings."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from annotate.models import ReviewSettings
from curation.errors import Conflict, InvalidInput, NotFound
from curation.models import Batch, Context, Instance, Project
from curation.services.batches import batch_open
from curation.services.lifecycle import instance_transition
from curation.services.projects import require_role
from curation.states import Role, Status

SETTLED = (Status.VALIDATED, Status.RELEASED, Status.DISCARDED)


def batch_is_complete(batch: Batch) -> bool:
    """Every instance of the batch is validated, released or discarded (an empty batch is not complete)."""
    instances = Instance.objects.filter(batch=batch)
    return instances.exists() and not instances.exclude(status__in=SETTLED).exists()


def settle_after_transition(instance: Instance, source: str, target: str) -> None:
    """Lifecycle hook: an instance that became validated or discarded may complete its batch."""
    if target in (Status.VALIDATED, Status.DISCARDED) and source != target:
        batch_settle(batch_id=instance.batch_id)


@transaction.atomic
def batch_settle(*, batch_id: int | None) -> Batch | None:
    """Called after an instance of `batch_id` is validated or discarded: under sequential gating, a complete open
    batch is closed and the next planned batch opens. Returns the batch that opened, if any.

    The batch row is locked before counting, so of two last instances settled concurrently the second to get the
    lock sees the first one's commit (PostgreSQL read committed) and opens the next batch exactly once.
    """
    if batch_id is None:
        return None
    batch = Batch.objects.select_for_update().select_related("project").filter(pk=batch_id).first()
    if batch is None or batch.project.gating != Project.Gating.SEQUENTIAL:
        return None
    if batch.state != Batch.State.OPEN or not batch_is_complete(batch):
        return None
    Batch.objects.filter(pk=batch.pk, state=Batch.State.OPEN).update(state=Batch.State.CLOSED)
    return batches_advance(project=batch.project)


@transaction.atomic
def batches_advance(*, project: Project) -> Batch | None:
    """Under sequential gating, open the first planned batch when no earlier batch is still unfinished."""
    if project.gating != Project.Gating.SEQUENTIAL:
        return None
    upcoming = Batch.objects.filter(project=project, state=Batch.State.PLANNED).order_by("order", "id").first()
    if upcoming is None:
        return None
    earlier = Batch.objects.filter(project=project).filter(
        Q(order__lt=upcoming.order) | Q(order=upcoming.order, id__lt=upcoming.pk)
    )
    if not earlier.exists():
        return None  # the first batch of a project is opened by a manager
    if any(not batch_is_complete(b) for b in earlier.exclude(state=Batch.State.PLANNED)):
        return None
    try:
        return batch_open(batch_id=upcoming.pk, actor=None)
    except Conflict:
        return None  # opened concurrently


@transaction.atomic
def project_gating_set(*, project: Project, actor: AbstractBaseUser, gating: str) -> Project:
    """Switch a project between manual and sequential batch gating. Managers only."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="change batch gating")
    if gating not in Project.Gating.values:
        raise InvalidInput(f"Gating is {' or '.join(Project.Gating.values)}, not {gating!r}.")
    Project.objects.filter(pk=project.pk).update(gating=gating)
    project.refresh_from_db()
    if gating == Project.Gating.SEQUENTIAL:
        for batch in Batch.objects.filter(project=project, state=Batch.State.OPEN):
            batch_settle(batch_id=batch.pk)
        batches_advance(project=project)
    return project


@transaction.atomic
def batch_assign(
    *,
    batch_id: int,
    actor: AbstractBaseUser,
    instance_ids: list[int] | None = None,
    context_ids: list[int] | None = None,
) -> int:
    """Put drafts (and the drafts of the given contexts) into a planned or open batch. Managers only.

    Only drafted instances move: work already under way stays in the batch it was handed out with.
    """
    batch = Batch.objects.select_related("project").filter(pk=batch_id).first()
    if batch is None:
        raise NotFound(f"Batch {batch_id} does not exist.")
    require_role(user=actor, project=batch.project, roles=(Role.MANAGER,), action="fill batches")
    if batch.state == Batch.State.CLOSED:
        raise InvalidInput(f"Batch {batch.name!r} is closed; create a new batch.")
    instance_ids = list(instance_ids or [])
    context_ids = list(context_ids or [])
    if not instance_ids and not context_ids:
        raise InvalidInput("Choose drafts or contexts to add.")
    contexts = Context.objects.filter(project=batch.project, pk__in=context_ids)
    if contexts.count() != len(set(context_ids)):
        raise InvalidInput("Some contexts are not in this project.")
    contexts.update(batch=batch)
    selected = Instance.objects.filter(project=batch.project).filter(
        Q(pk__in=instance_ids) | Q(context_id__in=context_ids)
    )
    if Instance.objects.filter(pk__in=instance_ids).exclude(project=batch.project).exists():
        raise InvalidInput("Some instances are not in this project.")
    return selected.filter(status=Status.DRAFTED).update(batch=batch)


@transaction.atomic
def instance_discard(*, instance_id: int, actor: AbstractBaseUser, expected_version: int, reason: str) -> Instance:
    """A manager takes an instance out of the work (nothing is deleted); a concurrent action makes this a Conflict."""
    reason = reason.strip()
    if not reason:
        raise InvalidInput("Say why the instance is discarded.")
    current = Instance.objects.filter(pk=instance_id).values("status").first()
    if current is None:
        raise NotFound(f"Instance {instance_id} does not exist.")
    instance = instance_transition(
        instance_id=instance_id,
        target=Status.DISCARDED,
        actor=actor,
        expected_status=current["status"],
        expected_version=expected_version,
        reason=f"discarded: {reason}",
    )
    return instance


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


def review_settings_of(project: Project) -> ReviewSettings:
    """The project's pay settings, or unsaved defaults ($1 per validated instance, as SciTaT paid)."""
    return ReviewSettings.objects.filter(project=project).first() or ReviewSettings(project=project)


@transaction.atomic
def review_settings_set(
    *, project: Project, actor: AbstractBaseUser, pay_per_instance: str | Decimal, currency: str = "USD"
) -> ReviewSettings:
    """Set the pay rate per validated instance. Managers only."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="set the pay rate")
    try:
        rate = Decimal(str(pay_per_instance))
    except InvalidOperation as exc:
        raise InvalidInput("The pay rate must be a number.") from exc
    if rate < 0 or rate >= Decimal("1000000"):
        raise InvalidInput("The pay rate must be between 0 and 999999.99.")
    currency = (currency or "USD").strip().upper()
    if len(currency) != 3 or not currency.isalpha():
        raise InvalidInput("The currency is a three-letter code such as USD.")
    record, _ = ReviewSettings.objects.update_or_create(
        project=project, defaults={"pay_per_instance": rate.quantize(Decimal("0.01")), "currency": currency}
    )
    return record

"""Batch rules: managers create, open and time batches; drafts and contexts are grouped into them; a batch settles
when every instance of it is settled, and under sequential gating the next one opens."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from curation.errors import Conflict, InvalidInput, NotFound
from curation.models import Batch, Context, Instance, Paper, Project
from curation.services.projects import batch_managed, require_role
from curation.services.unique import create_unique
from curation.states import Role, Status
from curation.webhooks.services import webhook_emit


@transaction.atomic
def batch_create(*, project: Project, actor: AbstractBaseUser | None, name: str) -> Batch:
    """A new planned batch at the end of the project's batch order, so its number is the project's next. Managers only.

    The project's row is locked while the last number is read and the next one taken, so two batches created at the
    same moment get different numbers (on SQLite the write lock serializes them); the unique (project, order)
    constraint is the last word, and its violation is a Conflict, never a 500."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="create batches")
    name = name.strip()
    if not name:
        raise InvalidInput("A batch needs a name.")
    Project.objects.select_for_update().values_list("pk", flat=True).get(pk=project.pk)
    last = Batch.objects.filter(project=project).aggregate(order=Max("order"))["order"]
    order = 0 if last is None else last + 1
    return create_unique(
        lambda: Batch.objects.create(project=project, name=name, order=order),
        taken=lambda: Batch.objects.filter(project=project, order=order).exists(),
        field="order",
        message=f"Another batch took number {order + 1} in this project at the same moment; create this one again.",
    )


@transaction.atomic
def batch_deadline_set(*, batch_id: int, actor: AbstractBaseUser | None, deadline_at: datetime | None) -> Batch:
    """Set (or clear, with None) a batch's deadline. Managers only (`actor=None` is an operator command); a new
    deadline must be in the future and timezone-aware."""
    batch = batch_managed(batch_id, actor, "set batch deadlines")
    if deadline_at is not None:
        if timezone.is_naive(deadline_at):
            message = "A deadline needs a time zone (e.g. 2027-01-15T17:00Z)."
            raise InvalidInput(message, detail={"field": "deadline_at"})
        if deadline_at <= timezone.now():
            raise InvalidInput("A deadline must be in the future.", detail={"field": "deadline_at"})
    Batch.objects.filter(pk=batch.pk).update(deadline_at=deadline_at)
    batch.deadline_at = deadline_at
    return batch


@transaction.atomic
def batch_open(*, batch_id: int, actor: AbstractBaseUser | None) -> Batch:
    """Open a planned batch for annotation (exactly once). Managers only."""
    batch = batch_managed(batch_id, actor, "open batches")
    updated = Batch.objects.filter(pk=batch_id, state=Batch.State.PLANNED).update(
        state=Batch.State.OPEN, opened_at=timezone.now()
    )
    if updated != 1:
        raise Conflict(f"Batch {batch.name!r} is {batch.state}, not planned.")
    batch.refresh_from_db()
    return batch


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
    if batch is None:
        return None
    batch_mark_settled(batch=batch)
    is_sequential = batch.project.gating == Project.Gating.SEQUENTIAL
    if not is_sequential or batch.state != Batch.State.OPEN or not batch_is_complete(batch):
        return None
    Batch.objects.filter(pk=batch.pk, state=Batch.State.OPEN).update(state=Batch.State.CLOSED)
    return batches_advance(project=batch.project)


def batch_mark_settled(*, batch: Batch) -> bool:
    """The one place a batch becomes settled: the first time every instance of it is validated, released or
    discarded, `settled_at` is set (once, by a conditional UPDATE under the caller's row lock) and `batch.settled`
    goes to the project's webhooks. True when this call settled it."""
    if batch.settled_at is not None or not batch_is_complete(batch):
        return False
    now = timezone.now()
    if not Batch.objects.filter(pk=batch.pk, settled_at__isnull=True).update(settled_at=now):
        return False
    batch.settled_at = now
    counts = Instance.objects.filter(batch=batch).values_list("status").annotate(n=Count("id")).order_by()
    payload = {"batch": {"id": batch.pk, "name": batch.name, "settled_at": now}, "counts": dict(counts)}
    webhook_emit(project=batch.project, event="batch.settled", payload=payload)
    return True


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


def _fillable(batch_id: int, actor: AbstractBaseUser | None) -> Batch:
    batch = batch_managed(batch_id, actor, "fill batches")
    if batch.state == Batch.State.CLOSED:
        raise InvalidInput(f"Batch {batch.name!r} is closed; create a new batch.")
    return batch


@transaction.atomic
def batch_assign(
    *,
    batch_id: int,
    actor: AbstractBaseUser | None,
    instance_ids: list[int] | None = None,
    context_ids: list[int] | None = None,
) -> int:
    """Put drafts (and the drafts of the given contexts) into a planned or open batch. Managers only
    (`actor=None` is an operator command). Only drafted instances move: work under way stays in its batch."""
    batch = _fillable(batch_id, actor)
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
def batch_add_papers(*, project: Project, actor: AbstractBaseUser, batch_id: int, paper_ids: list[int]) -> dict:
    """Put every short context of the chosen papers, and their drafts, into a planned or open batch, whichever batch
    they were in (the instance browser's "move these papers"; `batch_fill_from_papers` fills from contexts in none).

    A paper without short contexts (it cites no table) is refused by name, and then nothing moves."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="fill batches")
    if not Batch.objects.filter(project=project, pk=batch_id).exists():
        raise NotFound(f"No batch {batch_id} in this project.")
    ids = sorted(set(paper_ids))
    if not ids:
        raise InvalidInput("Choose the papers to add.", detail={"field": "papers"})
    papers = {p.pk: p for p in Paper.objects.filter(project=project, pk__in=ids)}
    if len(papers) != len(ids):
        raise NotFound("Some of these papers are not in this project.")
    contexts = list(
        Context.objects.filter(project=project, paper_id__in=ids, kind=Context.Kind.SHORT).values_list("pk", "paper_id")
    )
    empty = [papers[pk].title for pk in ids if pk not in {paper for _, paper in contexts}]
    if empty:
        raise InvalidInput(
            f"These papers have no short contexts (no paragraph cites a table): {'; '.join(empty[:5])}.",
            detail={"field": "papers"},
        )
    drafts = batch_assign(batch_id=batch_id, actor=actor, context_ids=[pk for pk, _ in contexts])
    return {"contexts": len(contexts), "drafts": drafts}


def sample_per_paper(contexts: Iterable[tuple[int, int]], *, per_paper: int | None, seed: int) -> list[int]:
    """Of (context id, paper id) pairs, `per_paper` context ids of each paper (all when None), in id order.

    Each paper's draw depends only on the seed, the paper and its own contexts, so adding papers to the pool
    does not change what the others give; the same seed gives the same sample.
    """
    by_paper: dict[int, list[int]] = {}
    for context_id, paper_id in contexts:
        by_paper.setdefault(paper_id, []).append(context_id)
    chosen: list[int] = []
    for paper_id, ids in sorted(by_paper.items()):
        ids.sort()
        if per_paper is not None and per_paper < len(ids):
            ids = random.Random(f"{seed}:{paper_id}").sample(ids, per_paper)
        chosen.extend(ids)
    return sorted(chosen)


@dataclass
class BatchSample:
    """What filling a batch from papers did: the contexts put in, from how many papers, and the drafts moved."""

    batch_id: int
    per_paper: int | None
    seed: int
    papers: int
    context_ids: list[int]
    moved: int

    @property
    def contexts(self) -> int:
        return len(self.context_ids)


@transaction.atomic
def batch_fill_from_papers(
    *,
    batch_id: int,
    actor: AbstractBaseUser | None,
    per_paper: int | None = None,
    seed: int = 0,
    paper_ids: list[int] | None = None,
) -> BatchSample:
    """Put short contexts without a batch into a batch: all of the named papers' (every paper's when none are
    named), or `per_paper` of each drawn with `seed` (SciTaT has about 1.1 questions per paper). Managers only;
    `actor=None` is an operator command. Their drafts move with them, as in `batch_assign`."""
    batch = _fillable(batch_id, actor)
    if per_paper is not None and per_paper < 1:
        raise InvalidInput("Contexts per paper must be a whole number of at least 1 (leave it empty for all).")
    pool = Context.objects.filter(project=batch.project, kind=Context.Kind.SHORT, batch__isnull=True)
    if paper_ids:
        known = set(batch.project.papers.filter(pk__in=paper_ids).values_list("pk", flat=True))
        if known != set(paper_ids):
            raise InvalidInput(f"Papers not in this project: {sorted(set(paper_ids) - known)[:20]}.")
        pool = pool.filter(paper_id__in=paper_ids)
    pairs = list(pool.values_list("pk", "paper_id"))
    if not pairs:
        raise InvalidInput("Those papers have no short context left without a batch.")
    chosen = sample_per_paper(pairs, per_paper=per_paper, seed=seed)
    moved = batch_assign(batch_id=batch.pk, actor=actor, context_ids=chosen)
    return BatchSample(
        batch_id=batch.pk,
        per_paper=per_paper,
        seed=seed,
        papers=len({paper_id for _, paper_id in pairs}),
        context_ids=chosen,
        moved=moved,
    )

"""Writes for contexts: reasoning types follow the project's target shares over leaf types; managers only.

Only short contexts (a paragraph and the tables it cites) get reasoning types and drafts: SciTaT asks each question
on its short context and evaluates it again on the whole paper (§2.5), so a long context has no questions of its own.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from curation.errors import InvalidInput
from curation.models import Batch, Context, Project, ReasoningType
from curation.services.projects import require_role
from curation.states import Role

LONG_CONTEXT_REFUSAL = (
    "A long context (the whole paper) gets no reasoning type or drafts of its own: questions are drafted on short "
    "contexts and each is evaluated on its whole paper too."
)


@dataclass
class AssignmentResult:
    """How many contexts got each leaf type (by code), and the shares aimed at."""

    seed: int
    assigned: int
    counts: dict[str, int]
    targets: dict[str, float]

    def as_dict(self) -> dict[str, object]:
        return {"seed": self.seed, "assigned": self.assigned, "counts": self.counts, "targets": self.targets}


def leaf_reasoning_types(project: Project) -> list[ReasoningType]:
    """The assignable types of a project: those without subtypes, in taxonomy order."""
    types = list(ReasoningType.objects.filter(project=project).order_by("order", "pk"))
    parents = {reasoning_type.parent_id for reasoning_type in types if reasoning_type.parent_id is not None}
    return [reasoning_type for reasoning_type in types if reasoning_type.pk not in parents]


def apportion(total: int, weights: list[float]) -> list[int]:
    """Largest-remainder (Hamilton) apportionment of `total` items over `weights`; ties go to the earlier weight."""
    positive = sum(weight for weight in weights if weight > 0)
    if total == 0 or positive <= 0:
        return [0] * len(weights)
    quotas = [total * max(weight, 0.0) / positive for weight in weights]
    counts = [math.floor(quota) for quota in quotas]
    remaining = total - sum(counts)
    order = sorted(range(len(weights)), key=lambda index: (-(quotas[index] - counts[index]), index))
    for index in order[:remaining]:
        counts[index] += 1
    return counts


@transaction.atomic
def contexts_assign_reasoning_types(
    *,
    project: Project,
    actor: AbstractBaseUser | None,
    seed: int,
    contexts: Iterable[Context] | None = None,
    batch: Batch | None = None,
) -> AssignmentResult:
    """Give every chosen context a leaf type so the counts follow the target shares; same seed, same result.

    Chosen are `contexts`, or all short contexts of `batch` (reassigned as a whole), or else the project's
    short contexts without a type. Managers only.
    """
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="assign reasoning types")
    if contexts is not None and batch is not None:
        raise InvalidInput("Give contexts or a batch, not both.")
    if batch is not None and batch.project_id != project.pk:
        raise InvalidInput(f"Batch {batch.name!r} belongs to another project.")
    shorts = Context.objects.filter(project=project, kind=Context.Kind.SHORT)
    if contexts is not None:
        ids = sorted({context.pk for context in contexts})
        if Context.objects.filter(pk__in=ids).exclude(project=project).exists():
            raise InvalidInput("Some of these contexts belong to another project.")
        if Context.objects.filter(pk__in=ids, kind=Context.Kind.LONG).exists():
            raise InvalidInput(LONG_CONTEXT_REFUSAL)
    elif batch is not None:
        ids = list(shorts.filter(batch=batch).order_by("pk").values_list("pk", flat=True))
    else:
        ids = list(shorts.filter(reasoning_type__isnull=True).order_by("pk").values_list("pk", flat=True))
    leaves = [leaf for leaf in leaf_reasoning_types(project) if leaf.target_proportion > 0]
    if not leaves:
        raise InvalidInput("The project has no reasoning type with a target share above zero.")
    counts = apportion(len(ids), [leaf.target_proportion for leaf in leaves])
    pool = [leaf for leaf, count in zip(leaves, counts, strict=True) for _ in range(count)]
    # Contexts are taken in id order and the pool is shuffled, so the result depends on the seed only.
    random.Random(seed).shuffle(pool)
    chosen: dict[int, list[int]] = {}
    for context_id, leaf in zip(ids, pool, strict=True):
        chosen.setdefault(leaf.pk, []).append(context_id)
    for leaf_id, context_ids in chosen.items():
        Context.objects.filter(pk__in=context_ids).update(reasoning_type_id=leaf_id)
    total_share = sum(leaf.target_proportion for leaf in leaves)
    return AssignmentResult(
        seed=seed,
        assigned=len(ids),
        counts={leaf.code: count for leaf, count in zip(leaves, counts, strict=True)},
        targets={leaf.code: round(100 * leaf.target_proportion / total_share, 3) for leaf in leaves},
    )


@transaction.atomic
def context_set_reasoning_type(
    *, context: Context, reasoning_type: ReasoningType | None, actor: AbstractBaseUser | None
) -> Context:
    """A manager's override of one context's reasoning type (a leaf of the same project, or none)."""
    require_role(user=actor, project=context.project, roles=(Role.MANAGER,), action="change reasoning types")
    if reasoning_type is not None:
        if context.kind == Context.Kind.LONG:
            raise InvalidInput(LONG_CONTEXT_REFUSAL)
        if reasoning_type.project_id != context.project_id:
            raise InvalidInput(f"{reasoning_type.code!r} is not a reasoning type of this project.")
        if ReasoningType.objects.filter(parent=reasoning_type).exists():
            raise InvalidInput(f"{reasoning_type.code!r} has subtypes; choose one of them.")
    context.reasoning_type = reasoning_type
    context.save(update_fields=["reasoning_type"])
    return context


def context_set_reasoning_code(*, context: Context, code: str | None, actor: AbstractBaseUser | None) -> Context:
    """`context_set_reasoning_type` by the type's code, as the page and the API receive it (empty or None: none)."""
    reasoning_type = None
    if code:
        reasoning_type = ReasoningType.objects.filter(project_id=context.project_id, code=code).first()
        if reasoning_type is None:
            raise InvalidInput(f"{code!r} is not a reasoning type of this project.")
    return context_set_reasoning_type(context=context, reasoning_type=reasoning_type, actor=actor)

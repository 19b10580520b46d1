"""What release cuts leave out: validated instances a release must not publish unless its manager asks, named by
the apps that know them (the domain imports no app). annotate registers the qualification exam's gold pool: a
published release would hand the exam's answers to every future candidate."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

from django.db.models import Q

from curation.models import Project

# (reason, function of a project giving a queryset of instance ids), registered from AppConfig.ready.
_WITHHELD: list[tuple[str, Callable[[Project], Any]]] = []


def withhold_from_releases(reason: str, instance_ids_of: Callable[[Project], Any]) -> None:
    """Register a kind of instance cuts leave out (from an AppConfig.ready); `reason` is said to the manager."""
    if all(registered != reason for registered, _ in _WITHHELD):
        _WITHHELD.append((reason, instance_ids_of))


def withheld_counts(*, project: Project, instances: Any) -> dict[str, int]:
    """Of the `instances` queryset, how many each registered reason withholds from a cut (reasons withholding
    none are left out)."""
    counts = {reason: instances.filter(pk__in=ids_of(project)).count() for reason, ids_of in _WITHHELD}
    return {reason: n for reason, n in counts.items() if n}


def withheld_q(project: Project) -> Q:
    return functools.reduce(operator.or_, (Q(pk__in=ids_of(project)) for _, ids_of in _WITHHELD), Q(pk__in=[]))


def withheld_reasons(counts: dict[str, int]) -> str:
    return "; ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))


def withheld_note(counts: dict[str, int]) -> str:
    """The sentence a release (its notes, its dataset card) says about what its cut left out."""
    total = sum(counts.values())
    what = f"{total} validated instance{'s' if total != 1 else ''}"
    return f"{what} withheld from this release: {withheld_reasons(counts)}."

"""Items a user works on under an instance's number that are not instances (the domain imports no app: annotate
registers its hidden-gold probes here). Every read of one instance by number asks here first, so such an item answers
its one holder as the instance it stands for would — with its own revisions and timeline — and no one else at all;
every list of the instances a user may see (the API's, the instance browser's, the work export's) takes its holder's
stand-ins in among the rows by number (`with_stand_ins`), where the instance would be."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q, QuerySet

from curation.models import Instance, InstanceRevision, TransitionEvent
from curation.pagination import count_up_to


@dataclass
class StandIn:
    """An unsaved instance numbered as the item is, with the history a real instance in its place would have."""

    instance: Instance
    revisions: list[InstanceRevision] = field(default_factory=list)
    events: list[TransitionEvent] = field(default_factory=list)


# Functions of (user, number) giving the user's stand-in under that number, or None; registered from AppConfig.ready.
_FINDERS: list[Callable[..., StandIn | None]] = []
# Functions of (user, project_id or None) giving every stand-in the user works on, as unsaved numbered instances.
_LISTERS: list[Callable[..., list[Instance]]] = []


def stand_in_register(finder: Callable[..., StandIn | None], lister: Callable[..., list[Instance]]) -> None:
    """Register a kind of stand-in (from an AppConfig.ready): how to find one by number, and how to list them."""
    if finder not in _FINDERS:
        _FINDERS.append(finder)
        _LISTERS.append(lister)


def stand_in_of(*, user: AbstractBaseUser, number: int) -> StandIn | None:
    """What `user` works on as instance #number when it is not an instance, or None (then it is an instance's)."""
    if not user.is_authenticated:
        return None
    for finder in _FINDERS:
        found = finder(user=user, number=number)
        if found is not None:
            return found
    return None


def stand_ins_listed(*, user: AbstractBaseUser, project_id: int | None = None) -> list[Instance]:
    """Every stand-in `user` works on (in one project, or in all), as the instances they stand for."""
    if not user.is_authenticated:
        return []
    return [instance for lister in _LISTERS for instance in lister(user=user, project_id=project_id)]


class WithStandIns:
    """`rows` (a queryset ordered by id, ascending or descending) with `extra` unsaved instances taken in by number,
    as a sequence a paginator reads: its length is counted as the lists count (at most COUNT_UP_TO + 1 rows read)
    and a slice reads one slice of `rows` — after one query that places each extra among them."""

    def __init__(self, rows: QuerySet[Instance], extra: list[Instance], *, descending: bool) -> None:
        self.rows, self.descending = rows, descending
        self.extra = sorted(extra, key=lambda i: i.pk, reverse=descending)
        self._positions: list[int] | None = None

    def __len__(self) -> int:
        return count_up_to(self.rows) + len(self.extra)

    def positions(self) -> list[int]:
        """Where each extra stands in the merged order: the rows before it, plus the extras before it."""
        if self._positions is None:
            before = "pk__gt" if self.descending else "pk__lt"
            counts = self.rows.order_by().aggregate(
                **{f"b{n}": Count("pk", filter=Q(**{before: e.pk})) for n, e in enumerate(self.extra)}
            )
            self._positions = [counts[f"b{n}"] + n for n in range(len(self.extra))]
        return self._positions

    def __getitem__(self, index: slice) -> list[Instance]:
        if not isinstance(index, slice) or index.step not in (None, 1):
            raise TypeError("WithStandIns is read a slice at a time.")
        start, stop = index.start or 0, index.stop
        positions = self.positions()
        inside = [e for e, at in zip(self.extra, positions, strict=True) if at >= start and (stop is None or at < stop)]
        rows_from = start - sum(1 for at in positions if at < start)
        rows_to = None if stop is None else stop - sum(1 for at in positions if at < stop)
        return self._merged(list(self.rows[rows_from:rows_to]), inside)

    def _merged(self, rows: Any, extra: list[Instance]) -> Any:
        return list(heapq.merge(rows, extra, key=lambda i: i.pk, reverse=self.descending))

    def __iter__(self) -> Iterator[Instance]:
        return self.iterator()

    def iterator(self, chunk_size: int = 500) -> Iterator[Instance]:
        """Every row and extra in order, the rows streamed as `QuerySet.iterator` streams them."""
        return heapq.merge(
            self.rows.iterator(chunk_size=chunk_size), self.extra, key=lambda i: i.pk, reverse=self.descending
        )


def with_stand_ins(
    rows: QuerySet[Instance],
    *,
    user: AbstractBaseUser,
    project_id: int | None = None,
    keep: Callable[[Instance], bool] = lambda instance: True,
    descending: bool = False,
) -> QuerySet[Instance] | WithStandIns:
    """The instances `rows` (ordered by id; descending if so) lists for `user`, with the user's stand-ins that `keep`
    (the list's filters, applied to one instance) taken in where their numbers fall: the rows themselves when there
    are none, so a list no stand-in belongs to costs one query more and nothing else."""
    extra = [instance for instance in stand_ins_listed(user=user, project_id=project_id) if keep(instance)]
    return WithStandIns(rows, extra, descending=descending) if extra else rows

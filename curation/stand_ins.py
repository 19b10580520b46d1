"""Items a user works on under an instance's number that are not instances (the domain imports no app: annotate
registers its hidden-gold probes here). Every read of one instance by number asks here first, so such an item answers
its one holder as the instance it stands for would — with its own revisions and timeline — and no one else at all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser

from curation.models import Instance, InstanceRevision, TransitionEvent


@dataclass
class StandIn:
    """An unsaved instance numbered as the item is, with the history a real instance in its place would have."""

    instance: Instance
    revisions: list[InstanceRevision] = field(default_factory=list)
    events: list[TransitionEvent] = field(default_factory=list)


# Functions of (user, number) giving the user's stand-in under that number, or None; registered from AppConfig.ready.
_FINDERS: list[Callable[..., StandIn | None]] = []


def stand_in_register(finder: Callable[..., StandIn | None]) -> None:
    """Register a kind of stand-in (from an AppConfig.ready)."""
    if finder not in _FINDERS:
        _FINDERS.append(finder)


def stand_in_of(*, user: AbstractBaseUser, number: int) -> StandIn | None:
    """What `user` works on as instance #number when it is not an instance, or None (then it is an instance's)."""
    if not user.is_authenticated:
        return None
    for finder in _FINDERS:
        found = finder(user=user, number=number)
        if found is not None:
            return found
    return None

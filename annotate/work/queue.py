"""The annotators' queue: an atomic claim that never gives one instance to two people, and lease upkeep."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery, Value
from django.utils import timezone

from annotate.quality.services import probes_passed_over_sql
from curation.errors import Conflict, NotFound, NotPermitted
from curation.models import Batch, Instance, Membership, Project
from curation.pagination import capped_count
from curation.selectors import claimable_drafts
from curation.services.lifecycle import instance_claim, instance_transition
from curation.states import Role, Status
from curation.visibility import is_operator

CLAIM_TRIES = 3


@dataclass(frozen=True)
class Claim:
    """What "Next" gave an annotator: the instance and version they now hold, the lease, and how it came."""

    instance_id: int
    version: int
    lease_expires_at: datetime
    how: str  # "held" (their active lease), "resumed" (changes requested of them) or "claimed" (a fresh draft)
    status: str = Status.IN_REFINEMENT
    copy_id: int | None = None  # a second, independent copy of someone else's instance (annotate.agreement)


# Work served before a fresh draft by a package above the queue (double annotation's second copies), registered
# from AnnotateConfig.ready: `pending(user)` is an expression over the project row (OuterRef "pk") saying whether
# the server may have something for this user, asked inside the queue's first look so that "Next" stays one query
# plus the claim when nothing is pending; `server(project_id=…, user=…)` then returns what it served (copy_id,
# lease_expires_at, how) or None. The queue stays below it, so the package may use the workspace's rules. Until one
# registers, nothing comes first.
_served_first = SimpleNamespace(server=lambda **_: None, pending=lambda user: Value(False))


def serve_before_drafts(server: Callable[..., Any], *, pending: Callable[[AbstractBaseUser], Any]) -> None:
    """Register `server` to be asked before a fresh claim when `pending` holds (from an AppConfig.ready)."""
    _served_first.server, _served_first.pending = server, pending


def lease_deadline() -> datetime:
    return timezone.now() + timedelta(minutes=settings.TATCURATE_LEASE_MINUTES)


def _claimer_state(*, project_slug: str, user: AbstractBaseUser) -> dict:
    """In one query: the project, whether the user is a qualified annotator of it, the lease they hold there
    (oldest first) and whether changes were requested of them."""
    mine = Instance.objects.filter(project_id=OuterRef("project_id"), author_id=user.pk)
    held = mine.filter(status=Status.IN_REFINEMENT).order_by("updated_at", "id")
    rows = list(
        Membership.objects.filter(user_id=user.pk, project__slug=project_slug)
        .order_by()
        .annotate(
            held_id=Subquery(held.values("pk")[:1]),
            held_version=Subquery(held.values("version")[:1]),
            has_returned=Exists(mine.filter(status=Status.CHANGES_REQUESTED)),
        )
        .values("project_id", "role", "is_qualified", "held_id", "held_version", "has_returned")
    )
    if not rows and not (is_operator(user) and Project.objects.filter(slug=project_slug).exists()):
        raise NotFound(f"No project {project_slug!r} that you belong to.")
    state = next((row for row in rows if row["role"] == Role.ANNOTATOR), None)
    if state is None:
        raise NotPermitted("Only annotators of this project have a work queue.")
    if not state["is_qualified"]:
        raise NotPermitted("Pass the qualification exam first; then drafts are yours to claim.")
    return state


def queue_claim(*, project_slug: str, user: AbstractBaseUser) -> Claim | None:
    """The annotator's next instance: their active lease, else their change requests, else a fresh claim.

    The fresh claim is the lifecycle's `instance_claim`: one conditional UPDATE that picks the row (batch
    order, reasoning types spread) and, on PostgreSQL, skips rows other claimers hold, so no instance is ever
    held by two annotators. It is tried first, because it only succeeds for a qualified annotator holding
    nothing and with nothing to be served instead (the look's rule, asked inside the same statement): then "Next"
    is that one statement. Otherwise the look says whether a second copy comes instead, and one more
    query says why nothing was claimed (a lease to give back, work sent back, or a refusal). None when nothing is
    left. Expired leases are returned by the periodic reaper (annotate.leases_reap, every minute), not here.
    """
    claimed = _claim(project_slug=project_slug, user=user, unless=_something_first_sql())
    if claimed is not None:
        return claimed
    look = _look(project_slug=project_slug, user=user).order_by().first()
    if look is not None and look["pending"] and not look["is_busy"]:
        # Work a package above the queue serves in place of a fresh draft (a second copy, served first since its
        # instance waits for it before round one), only when nothing is held or sent back.
        served = _served_first.server(project_id=look["pk"], user=user)
        if served is not None:
            return Claim(0, 1, served.lease_expires_at, how=served.how, copy_id=served.copy_id)
        # It had nothing for this user after all: a fresh draft then.
        claimed = _claim(project_slug=project_slug, user=user)
        if claimed is not None:
            return claimed

    state = _claimer_state(project_slug=project_slug, user=user)
    if state["held_id"] is not None:
        deadline = lease_renew(instance_id=state["held_id"], user=user)
        if deadline is not None:
            return Claim(state["held_id"], state["held_version"], deadline, how="held")

    if state["has_returned"]:
        returned = Instance.objects.filter(
            project_id=state["project_id"], author_id=user.pk, status=Status.CHANGES_REQUESTED
        )
        for candidate in returned.order_by("updated_at", "id").only("id", "version"):
            try:
                return _resume(instance_id=candidate.pk, version=candidate.version, user=user)
            except Conflict:
                continue

    # Nothing was claimable: the queue is empty, or (rarely) every draft in reach was being claimed by others
    # at that moment, or the lease we saw ended meanwhile; only the latter two are worth another try.
    open_drafts = Instance.objects.filter(
        project_id=state["project_id"], status=Status.DRAFTED, batch__state=Batch.State.OPEN
    )
    for _ in range(CLAIM_TRIES):
        if not open_drafts.exists():
            return None
        claimed = _claim(project_slug=project_slug, user=user)
        if claimed is not None:
            return claimed
    return None


def _claim(*, project_slug: str, user: AbstractBaseUser, unless: tuple[str, dict] | None = None) -> Claim | None:
    """The lifecycle's claim of a fresh draft, passing over hidden-gold probes of gold this annotator has seen (a
    probe is a draft like any other to everyone else)."""
    deadline = lease_deadline()
    passing_over = probes_passed_over_sql(connection.vendor)
    claimed = instance_claim(
        project_slug=project_slug, actor=user, lease_expires_at=deadline, unless=unless, passing_over=passing_over
    )
    return None if claimed is None else Claim(*claimed, deadline, how="claimed")


def _look(*, project_slug: str, user: AbstractBaseUser) -> QuerySet[Project]:
    """What comes before a fresh claim, over the project row: whether the annotator is busy (holds an instance or
    has work sent back), and the registered server's `pending` flag. `queue_claim` reads it when the claim claimed
    nothing; `_something_first_sql` asks it inside the claim."""
    mine = Instance.objects.filter(project_id=OuterRef("pk"), author_id=user.pk)
    return (
        Project.objects.filter(slug=project_slug)
        .annotate(
            is_busy=Exists(mine.filter(status__in=(Status.IN_REFINEMENT, Status.CHANGES_REQUESTED))),
            pending=_served_first.pending(user),
        )
        .values("pk", "is_busy", "pending")
    )


# Placeholders the look is compiled with once (no user or project has them; the user id stays in the range of a
# user's key, or Django would compile the comparison away): the claim passes the real ones as %(actor)s, %(slug)s.
_ACTOR_PLACEHOLDER = -2_147_480_001
_SLUG_PLACEHOLDER = "\x00the claimed project"


_SOMETHING_FIRST = "EXISTS (SELECT 1 FROM ({look}) look WHERE look.pending)"


@functools.cache
def _something_first_sql_for(vendor: str) -> tuple[str, tuple[tuple[str, Any], ...]]:
    placeholder_user = get_user_model()(pk=_ACTOR_PLACEHOLDER)
    sql, params = _look(project_slug=_SLUG_PLACEHOLDER, user=placeholder_user).query.sql_with_params()
    named: list[tuple[str, Any]] = []

    def name(match: re.Match[str]) -> str:
        if match.group() == "%%":
            return "%%"
        value = params[len(named)]
        key = {_ACTOR_PLACEHOLDER: "actor", _SLUG_PLACEHOLDER: "slug"}.get(value, f"look_{len(named)}")
        named.append((key, value))
        return f"%({key})s"

    sql = re.sub(r"%%|%s", name, sql)
    if not {"actor", "slug"} <= {key for key, _ in named}:  # the look would not be about this user and project
        raise RuntimeError("The queue's look no longer compiles with its user and project as parameters.")
    fixed = tuple((key, value) for key, value in named if key.startswith("look_"))
    return _SOMETHING_FIRST.format(look=sql), fixed


def _something_first_sql() -> tuple[str, dict[str, Any]]:
    """`_look`'s rule as an SQL condition for the claim (the claim claims nothing when it holds), compiled once per
    process: its text never changes between claims, so PostgreSQL keeps one prepared plan for the claim with it."""
    sql, fixed = _something_first_sql_for(connection.vendor)
    return sql, dict(fixed)


def _resume(*, instance_id: int, version: int, user: AbstractBaseUser) -> Claim:
    resumed = instance_transition(
        instance_id=instance_id,
        target=Status.IN_REFINEMENT,
        actor=user,
        expected_status=Status.CHANGES_REQUESTED,
        expected_version=version,
        reason="resume requested changes",
        assignments={"lease_expires_at": lease_deadline()},
    )
    return Claim(resumed.pk, resumed.version, resumed.lease_expires_at, how="resumed")


def queue_resume(*, instance_id: int, user: AbstractBaseUser) -> Claim:
    """Open one item a verifier sent back to this annotator ("Sent back to you"), at once.

    Whatever else they hold does not block it: a draft in their hands stays theirs, with its autosaves, and its
    lease keeps running (if they leave it alone past the lease, the reaper returns it to the queue, the work
    kept as a revision). Only the author, qualified, may resume (the lifecycle checks it).
    """
    instance = Instance.objects.filter(pk=instance_id).only("id", "version", "status", "author_id").first()
    if instance is None or instance.author_id != user.pk:
        raise NotFound(f"No instance {instance_id} sent back to you.")
    if instance.status == Status.IN_REFINEMENT:
        deadline = lease_renew(instance_id=instance_id, user=user)
        if deadline is not None:
            return Claim(instance.pk, instance.version, deadline, how="held")
    if instance.status != Status.CHANGES_REQUESTED:
        raise Conflict(
            "This instance is not waiting for your changes any more.",
            detail={"status": instance.status, "version": instance.version},
        )
    return _resume(instance_id=instance_id, version=instance.version, user=user)


def lease_renew(*, instance_id: int, user: AbstractBaseUser) -> datetime | None:
    """Extend the lease `user` holds on the instance (refining it, or reviewing it in either round) while they work;
    the new deadline, or None when they no longer hold it."""
    deadline = lease_deadline()
    held = (
        Q(status=Status.IN_REFINEMENT, author=user)
        | Q(status=Status.ROUND1_REVIEW, round1_verifier=user)
        | Q(status=Status.ROUND2_REVIEW, round2_reviewer=user)
    )
    updated = Instance.objects.filter(held, pk=instance_id).update(lease_expires_at=deadline)
    return deadline if updated else None


def queue_counts(*, project: Project, user: AbstractBaseUser) -> dict[str, int]:
    """What waits for this annotator: open drafts they may claim (those assigned to them among them; counted up to
    1,000, `available_capped` when there are more), their change requests, what they hold."""
    mine = Instance.objects.filter(project=project, author=user)
    open_drafts = Instance.objects.filter(project=project, status=Status.DRAFTED, batch__state=Batch.State.OPEN)
    available, available_capped = capped_count(claimable_drafts(project=project, user=user))
    return {
        "available": available,
        "available_capped": available_capped,
        "assigned": open_drafts.filter(assigned_to=user).count(),
        "changes_requested": mine.filter(status=Status.CHANGES_REQUESTED).count(),
        "held": mine.filter(status=Status.IN_REFINEMENT).count(),
        "submitted": mine.exclude(
            status__in=(Status.DRAFTED, Status.IN_REFINEMENT, Status.CHANGES_REQUESTED, Status.DISCARDED)
        ).count(),
    }


def assigned_drafts(*, project: Project, user: AbstractBaseUser) -> QuerySet[Instance]:
    """Drafts a manager assigned to this annotator and not yet claimed (served before anything else)."""
    return (
        Instance.objects.filter(project=project, assigned_to=user, status=Status.DRAFTED)
        .select_related("batch", "reasoning_type")
        .order_by("id")
    )

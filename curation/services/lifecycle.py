"""The one function that changes an instance's status: table check, role check, compare-and-set, audit row."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from contextlib import nullcontext
from datetime import datetime, timedelta
from typing import Any

import psycopg
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import F
from django.template.defaultfilters import pluralize
from django.utils import timezone

from curation.errors import Conflict, InvalidInput, NotFound, NotPermitted
from curation.models import Batch, Instance, Membership, TransitionEvent
from curation.services.instances import revision_record
from curation.states import (
    ANYONE,
    AUTHOR,
    LEASED_STATUSES,
    NOT_AUTHOR,
    NOT_RESUMED,
    ROUND1_VERIFIER,
    ROUND2_REVIEWER,
    SUBMISSION_RECORDED,
    SYSTEM,
    SYSTEM_TRANSITIONS,
    TRANSITION_TABLE,
    Role,
    Status,
    Transition,
)
from curation.visibility import sees_every_project

Hook = Callable[[Instance, str, str], None]

# Called after transitions inside their transaction, as hook(instance, source, target); apps register
# follow-ups here (e.g. batch gating) so they happen whichever entry point moved the instance. Each hook
# names the targets it cares about, so a transition no hook watches (a claim) loads nothing for them.
_AFTER_TRANSITION: list[tuple[Hook, frozenset[str]]] = []


def on_transition(hook: Hook, *, targets: Iterable[str]) -> None:
    """Register `hook` to run after every transition into one of `targets` (from an AppConfig.ready)."""
    entry = (hook, frozenset(targets))
    if entry not in _AFTER_TRANSITION:
        _AFTER_TRANSITION.append(entry)


def _hooks_for(target: str) -> list[Hook]:
    return [hook for hook, targets in _AFTER_TRANSITION if target in targets]


# A move's named rules (curation.states: Transition.guards / .effects). A guard sees the instance before the move
# and raises a domain error when the move may not happen; an effect runs after the compare-and-set, in the same
# transaction, and creates what the move implies. Both get the actor and the move's details (the comments of a
# change request, the message of a flag, ...), so the step services and the generic endpoint share them.
Rule = Callable[..., None]
_RULES: dict[str, Rule] = {}


def transition_rule(name: str, rule: Rule) -> None:
    """Register the implementation of a guard or effect named in the transition table (from an AppConfig.ready)."""
    _RULES[name] = rule


def _table_row(source: str, target: str) -> Transition:
    """The transition table's row for source → target; InvalidInput for an unknown status or a move not in it."""
    if target not in Status.values:
        raise InvalidInput(f"{target!r} is not a status; expected one of {', '.join(Status.values)}.")
    transition = TRANSITION_TABLE.get((source, target))
    if transition is None:
        raise InvalidInput(f"An instance cannot go from {source} to {target}.")
    return transition


def _rule(name: str, transition: Transition) -> Rule:
    rule = _RULES.get(name)
    if rule is None:  # fail closed: a move never happens without the rule the table gives it
        raise NotPermitted(f"Cannot {transition.description} here: its rule {name!r} is not installed.")
    return rule


def _submission_recorded(*, instance: Instance, actor: AbstractBaseUser | None, details: Mapping[str, Any]) -> None:
    """Keep the text as submitted, so reviewers and the history see exactly what was handed in."""
    revision_record(instance=instance, author=actor, kind="submit")


transition_rule(SUBMISSION_RECORDED, _submission_recorded)


def instance_is_resumed(*, instance_id: int) -> bool:
    """Whether the instance's current refinement is resumed work (changes a verifier asked for), not a fresh draft:
    its last move into in_refinement came from changes_requested."""
    came_from = (
        TransitionEvent.objects.filter(instance_id=instance_id, to_status=Status.IN_REFINEMENT)
        .order_by("-id")
        .values_list("from_status", flat=True)
        .first()
    )
    return came_from == Status.CHANGES_REQUESTED


def _not_resumed(*, instance: Instance, actor: AbstractBaseUser | None, details: Mapping[str, Any]) -> None:
    if instance_is_resumed(instance_id=instance.pk):
        raise InvalidInput("A verifier asked you for changes on this one: it cannot go back to the queue.")


transition_rule(NOT_RESUMED, _not_resumed)


# Fields a transition may set besides status/version (assignment of people and leases).
_ASSIGNABLE = {"author_id", "round1_verifier_id", "round2_reviewer_id", "lease_expires_at", "assigned_to_id"}


def _check_actor(transition: Transition, instance: Instance, actor: AbstractBaseUser) -> dict[str, Any]:
    """Refuse an actor without the role, qualification or relation; return the assignments the move implies."""
    if transition.relation == SYSTEM:
        raise NotPermitted(f"Only the system may {transition.description}; nobody does it by hand.")
    memberships = list(Membership.objects.filter(user=actor, project_id=instance.project_id, role__in=transition.roles))
    if not memberships and sees_every_project(actor, transition.roles):  # the operator rule: manager everywhere
        memberships = [Membership(user=actor, project_id=instance.project_id, role=Role.MANAGER)]
    if not memberships:
        roles = " or ".join(sorted(transition.roles))
        raise NotPermitted(f"Only a {roles} of this project may {transition.description}.")
    if transition.requires_qualification and not any(m.is_qualified or m.role != Role.ANNOTATOR for m in memberships):
        raise NotPermitted(f"You must pass the qualification exam before you can {transition.description}.")

    actor_id = actor.pk
    assignments: dict[str, Any] = {}
    relation = transition.relation
    if relation == AUTHOR:
        if instance.author_id != actor_id:
            raise NotPermitted(f"Only the annotator who holds this instance may {transition.description}.")
    elif relation == NOT_AUTHOR:
        if instance.author_id == actor_id:
            raise NotPermitted("Nobody reviews their own work: you are the author of this instance.")
        if instance.round1_verifier_id not in (None, actor_id):
            raise NotPermitted("This instance returns to the verifier who reviewed it before.")
        assignments["round1_verifier_id"] = actor_id
    elif relation == ROUND1_VERIFIER:
        if instance.round1_verifier_id != actor_id:
            raise NotPermitted(f"Only the round-one verifier of this instance may {transition.description}.")
    elif relation == ROUND2_REVIEWER:
        # Whose work is in the instance is the NOT_OWN_WORK guard's rule (double annotation decides it).
        if actor_id == instance.round1_verifier_id:
            raise NotPermitted("Round two must be done by someone other than the author and the round-one verifier.")
        if instance.round2_reviewer_id not in (None, actor_id):
            raise NotPermitted("Another annotator is already reviewing this instance in round two.")
        assignments["round2_reviewer_id"] = actor_id
    elif relation != ANYONE:  # pragma: no cover - the table only uses the relations above
        raise NotPermitted(f"Unknown relation {relation!r}.")

    if transition.source == Status.DRAFTED and transition.target == Status.IN_REFINEMENT:
        assignments["author_id"] = actor_id
    return assignments


@transaction.atomic
def instance_transition(
    *,
    instance_id: int,
    target: str,
    actor: AbstractBaseUser | None,
    expected_status: str | None = None,
    expected_version: int | None = None,
    reason: str = "",
    assignments: dict[str, Any] | None = None,
    details: Mapping[str, Any] | None = None,
) -> Instance:
    """Move an instance to `target` if the table, the actor's role and relation and the move's guards allow it;
    exactly one row changes, and the move's effects are created with it.

    `actor=None` is a background job and may only perform the system transitions (lease expiry, release).
    `details` carries what a move's rules need (e.g. `comments` for a change request, `message` for a flag).
    A concurrent change (status or version no longer as expected) raises Conflict and writes nothing; so does a
    guard or effect that fails (the transaction is rolled back whole).
    """
    # Outside the actor's projects an instance does not exist, before any state is looked at.
    rows = Instance.objects if actor is None else Instance.objects.visible_to(actor, Role.values)
    instance = rows.filter(pk=instance_id).first()
    if instance is None:
        raise NotFound(f"Instance {instance_id} does not exist.")
    # A member who may not read the instance (an annotator, someone else's item) learns nothing of its state.
    can_read = actor is None or Instance.objects.visible_to(actor).filter(pk=instance_id).exists()
    source = expected_status or instance.status
    version = expected_version if expected_version is not None else instance.version
    if source != instance.status or version != instance.version:
        if not can_read:
            raise Conflict("This instance is not available for that action.")
        raise Conflict(
            f"This instance changed meanwhile (it is now {instance.status}, version {instance.version}).",
            detail={"status": instance.status, "version": instance.version},
        )
    transition = _table_row(source, target)

    extra = dict(assignments or {})
    if set(extra) - _ASSIGNABLE:
        raise InvalidInput(f"Unexpected assignment fields: {sorted(extra)}.")
    if actor is not None:
        extra.update(_check_actor(transition, instance, actor))
    elif (source, target) not in SYSTEM_TRANSITIONS:
        raise NotPermitted(f"A background job may not move an instance from {source} to {target}.")
    details = dict(details or {})
    for name in transition.guards:
        _rule(name, transition)(instance=instance, actor=actor, details=details)
    effects = [_rule(name, transition) for name in transition.effects]
    if target == Status.DRAFTED and source == Status.IN_REFINEMENT:
        extra.setdefault("author_id", None)
        if actor is not None:  # the assignee gave it back: it returns to everyone (an expired lease keeps it theirs)
            extra.setdefault("assigned_to_id", None)
    if target == Status.SUBMITTED and source == Status.ROUND1_REVIEW:
        extra.setdefault("round1_verifier_id", None)  # a review left undecided goes back to the whole pile
    if target not in LEASED_STATUSES:
        extra.setdefault("lease_expires_at", None)

    updated = Instance.objects.filter(pk=instance_id, status=source, version=version).update(
        status=target, version=F("version") + 1, updated_at=timezone.now(), **extra
    )
    if updated != 1:
        current = Instance.objects.filter(pk=instance_id).values("status", "version").first() or {}
        raise Conflict(
            "Someone else acted on this instance first; reload to see its current state.",
            detail=current if can_read else None,
        )
    TransitionEvent.objects.create(
        instance_id=instance_id,
        actor=actor,
        from_status=source,
        to_status=target,
        version=version + 1,
        reason=reason,
    )
    instance.refresh_from_db()
    for effect in effects:
        effect(instance=instance, actor=actor, details=details)
    for hook in _hooks_for(target):
        hook(instance, source, target)
    return instance


# The claim: drafted → in_refinement for one of the next CLAIM_WINDOW drafts of the first open batch that has any
# (drafts assigned to the actor first, never someone else's), preferring the reasoning types the annotator met least
# in their last RECENT_CLAIMS claims. One conditional UPDATE picks its row by a subquery that, on PostgreSQL, locks
# it with FOR UPDATE SKIP LOCKED (concurrent claimers pass over each other's rows), and inserts the audit row in the
# same statement. `claimer` is the role check inside it: a qualified annotator of the project who holds nothing
# there. A draft the annotator skipped within TATCURATE_SET_ASIDE_HOURS is passed over for them only.
RECENT_CLAIMS = 20
CLAIM_WINDOW = 100
_CLAIM_CTES = """
claimer AS (
    SELECT m.project_id
    FROM curation_membership m JOIN curation_project p ON p.id = m.project_id
    WHERE p.slug = %(slug)s AND m.user_id = %(actor)s AND m.role = {annotator} AND m.is_qualified
      AND NOT EXISTS (
        SELECT 1 FROM curation_instance h
        WHERE h.author_id = m.user_id AND h.project_id = m.project_id
          AND h.status IN ({in_refinement}, {changes_requested})
      ){unless}
),
recent AS (
    SELECT claimed.reasoning_type_id, COUNT(*) AS n
    FROM (
        SELECT i.reasoning_type_id
        FROM curation_transitionevent e JOIN curation_instance i ON i.id = e.instance_id
        WHERE e.actor_id = %(actor)s AND i.project_id = (SELECT project_id FROM claimer)
          AND e.from_status = {drafted} AND e.to_status = {in_refinement}
        ORDER BY e.id DESC
        LIMIT %(recent)s
    ) claimed
    GROUP BY claimed.reasoning_type_id
),
first_batch AS (
    SELECT open_batch.id, open_batch.panel_order FROM (
        SELECT b.id, b."order", b.panel_order FROM curation_batch b
        WHERE b.project_id = (SELECT project_id FROM claimer) AND b.state = {open}
        ORDER BY b."order", b.id {in_order}
    ) open_batch
    WHERE EXISTS (
        SELECT 1 FROM curation_instance d WHERE d.batch_id = open_batch.id AND d.status = {drafted} {not_set_aside}
          AND (d.assigned_to_id IS NULL OR d.assigned_to_id = %(actor)s)
      )
    ORDER BY open_batch."order", open_batch.id
    LIMIT 1
),
upcoming AS (
    SELECT id FROM (
        SELECT d.id FROM curation_instance d JOIN curation_batch b ON b.id = d.batch_id
        WHERE d.assigned_to_id = %(actor)s AND d.status = {drafted} AND b.state = {open} {not_set_aside}
          AND b.project_id = (SELECT project_id FROM claimer)
        ORDER BY d.id
        LIMIT %(window)s
    ) assigned
    UNION ALL
    SELECT id FROM (
        SELECT d.id FROM curation_instance d
        WHERE d.batch_id = (SELECT id FROM first_batch) AND d.status = {drafted} {not_set_aside}
          AND (d.assigned_to_id IS NULL OR d.assigned_to_id = %(actor)s)
        ORDER BY d.id
        LIMIT %(window)s
    ) pool
    UNION ALL
    SELECT id FROM (
        SELECT d.id FROM curation_instance d
        WHERE d.batch_id = (SELECT id FROM first_batch) AND d.status = {drafted} AND d.panel_correct = 0 {not_set_aside}
          AND (d.assigned_to_id IS NULL OR d.assigned_to_id = %(actor)s)
          AND (SELECT panel_order FROM first_batch) = {unanswered_first}
        ORDER BY d.id
        LIMIT %(window)s
    ) unanswered
)"""
_CLAIM_UPDATE = """
UPDATE curation_instance
SET status = {in_refinement}, version = version + 1, author_id = %(actor)s,
    lease_expires_at = %(lease)s, updated_at = %(now)s
WHERE status = {drafted} AND id = (
    SELECT i.id
    FROM curation_instance i
    LEFT JOIN recent r ON COALESCE(r.reasoning_type_id, 0) = COALESCE(i.reasoning_type_id, 0)
    WHERE {among_upcoming} AND i.status = {drafted}
    ORDER BY CASE WHEN i.assigned_to_id = %(actor)s THEN 0 ELSE 1 END, {unanswered_rank}, COALESCE(r.n, 0), i.id
    LIMIT 1 {lock}
)
RETURNING id, version"""
_CLAIM_AUDIT = """
INSERT INTO curation_transitionevent (instance_id, actor_id, from_status, to_status, version, reason, created_at)
SELECT id, %(actor)s, {drafted}, {in_refinement}, version, CAST(%(reason)s AS text), %(now)s FROM {source}"""

# A draft this annotator skipped (their own in_refinement → drafted) recently is set aside for them.
_CLAIM_NOT_SET_ASIDE = """AND NOT EXISTS (
        SELECT 1 FROM curation_transitionevent s
        WHERE s.instance_id = d.id AND s.actor_id = %(actor)s AND s.from_status = {in_refinement}
          AND s.to_status = {drafted} AND s.created_at > %(set_aside_since)s
      )"""
# The batch's panel order (Batch.PanelOrder): what every panel model answered is held back; what none
# answered comes first.
_CLAIM_PANEL_HELD = """
      AND NOT (COALESCE(d.panel_correct, -1) = COALESCE(d.panel_size, 0) AND EXISTS (
        SELECT 1 FROM curation_batch hb WHERE hb.id = d.batch_id AND hb.panel_order = {hold_answered}
      ))"""
_CLAIM_UNANSWERED_RANK = """CASE WHEN i.panel_correct = 0 AND EXISTS (
        SELECT 1 FROM curation_batch ub WHERE ub.id = i.batch_id AND ub.panel_order = {unanswered_first}
    ) THEN 0 ELSE 1 END"""


def _sql_literal(value: str) -> str:
    """A choice value as an SQL string literal (choice values are identifiers, so quoting is all it needs)."""
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", value):
        raise ValueError(f"{value!r} is not a plain choice value")
    return f"'{value}'"


def claim_sql(unless: str = "", passing_over: str = "") -> dict[str, str]:
    """The claim statements per database vendor (and SQLite's audit insert), with every status, role and batch
    state taken from curation.states / the models, never copied: renaming a value renames it here too. With
    `unless` (an SQL condition), the claimer may claim only while it does not hold; with `passing_over` (an SQL
    condition on the candidate draft `d`, in the current vendor's dialect), drafts it holds for are not claimed."""
    names = {
        "drafted": Status.DRAFTED.value,
        "in_refinement": Status.IN_REFINEMENT.value,
        "changes_requested": Status.CHANGES_REQUESTED.value,
        "annotator": Role.ANNOTATOR.value,
        "open": Batch.State.OPEN.value,
        "unanswered_first": Batch.PanelOrder.UNANSWERED_FIRST.value,
        "hold_answered": Batch.PanelOrder.HOLD_ANSWERED.value,
    }
    literals = {name: _sql_literal(value) for name, value in names.items()}
    literals["unanswered_rank"] = _CLAIM_UNANSWERED_RANK.format(**literals)
    literals["not_set_aside"] = (_CLAIM_NOT_SET_ASIDE + _CLAIM_PANEL_HELD).format(**literals) + (
        f"\n      AND NOT {passing_over}" if passing_over else ""
    )
    unless = f"\n      AND NOT ({unless})" if unless else ""
    # The open batches are ordered first, then probed one by one until one has a draft (not every open batch: 1.9 ms
    # → 0.09 ms on a 100k project); the inner query is a fence the planner does not flatten (OFFSET 0; SQLite takes
    # no OFFSET without a LIMIT, so LIMIT -1).
    ctes = _CLAIM_CTES.format(unless=unless, in_order="OFFSET 0", **literals)
    sqlite_ctes = _CLAIM_CTES.format(unless=unless, in_order="LIMIT -1", **literals)
    # PostgreSQL reads the candidates by primary key whatever the table's size (with IN the planner may hash them
    # against a scan of the whole table); SQLite has no arrays.
    postgres_update = _CLAIM_UPDATE.format(
        lock="FOR UPDATE OF i SKIP LOCKED", among_upcoming="i.id = ANY(ARRAY(SELECT id FROM upcoming))", **literals
    )
    sqlite_update = _CLAIM_UPDATE.format(lock="", among_upcoming="i.id IN (SELECT id FROM upcoming)", **literals)
    return {
        "postgresql": (
            f"WITH {ctes},\nclaimed AS ({postgres_update}\n),"
            f"\naudit AS ({_CLAIM_AUDIT.format(source='claimed', **literals)}\n)\nSELECT id, version FROM claimed"
        ),
        "sqlite": f"WITH {sqlite_ctes}{sqlite_update}",
        "sqlite_audit": _CLAIM_AUDIT.format(source="(SELECT %(id)s AS id, %(version)s AS version)", **literals),
    }


CLAIM_SQL = claim_sql()
_claim_sql_unless = functools.cache(claim_sql)  # one text per caller's condition, so it stays one prepared plan


def set_aside_since() -> datetime:
    """Skips and give-backs younger than this keep the item out of that person's Next (TATCURATE_SET_ASIDE_HOURS)."""
    return timezone.now() - timedelta(hours=settings.TATCURATE_SET_ASIDE_HOURS)


# Any threshold psycopg would reach by counting: the claim's cursor asks for preparing itself.
_PREPARE_ON_REQUEST_ONLY = 1_000_000


class _PreparingCursor(psycopg.Cursor):
    """A psycopg cursor that binds parameters on the server and prepares every statement it runs (once per
    connection: psycopg keeps the prepared statements by their text). Prepared statements are off on the connection
    (settings: with them on, psycopg keeps the text of every cursor's last 100 statements, values inlined), so
    they are on only while this cursor's statement runs; a statement prepared once stays prepared."""

    def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
        self.connection.prepare_threshold = _PREPARE_ON_REQUEST_ONLY
        try:
            return super().execute(query, params, prepare=True)
        finally:
            self.connection.prepare_threshold = None


def _claim_cursor() -> Any:
    """A cursor for the claim. On PostgreSQL it prepares the statement, so each connection plans the claim once and
    then only executes it (Django's own cursors bind on the client, so every claim would be planned anew, which
    took as long as executing it; psycopg drops a connection's prepared statements on a rollback, and the next
    claim prepares it again). Django's wrapper stays around it, so query logging and execute wrappers see the
    claim as any other statement."""
    if connection.vendor != "postgresql":
        return connection.cursor()
    connection.ensure_connection()
    raw = _PreparingCursor(connection.connection)
    return connection.make_debug_cursor(raw) if connection.queries_logged else connection.make_cursor(raw)


def instance_claim(
    *,
    project_slug: str,
    actor: AbstractBaseUser,
    lease_expires_at: datetime,
    reason: str = "claimed from the queue",
    unless: tuple[str, Mapping[str, Any]] | None = None,
    passing_over: str = "",
) -> tuple[int, int] | None:
    """Claim the next drafted instance of the project for `actor`: (id, version) of what they now hold, or None
    when nothing is left or they may not claim (not a qualified annotator, or already holding work there).
    `unless` is the caller's SQL condition with its parameters (it may name %(actor)s and %(slug)s), asked in the
    same statement: while it holds, nothing is claimed (the queue's "something comes before a fresh draft").
    `passing_over` is the caller's SQL condition on a candidate `d` (it may name %(actor)s): drafts it holds for are
    left for others (hidden gold's probes of gold the claimer has seen).

    One statement moves the row (see CLAIM_SQL), so two claimers never get the same instance. On PostgreSQL,
    with no hook watching claims, that statement is the whole transaction (no BEGIN/COMMIT round trips).
    """
    params = {
        "actor": actor.pk,
        "slug": project_slug,
        "recent": RECENT_CLAIMS,
        "window": CLAIM_WINDOW,
        "lease": lease_expires_at,
        "now": timezone.now(),
        "reason": reason,
        "set_aside_since": set_aside_since(),
        **(unless[1] if unless else {}),
    }
    statements = _claim_sql_unless(unless[0] if unless else "", passing_over) if unless or passing_over else CLAIM_SQL
    hooks = _hooks_for(Status.IN_REFINEMENT)
    single_statement = connection.vendor == "postgresql" and not hooks
    with nullcontext() if single_statement else transaction.atomic(), _claim_cursor() as cursor:
        cursor.execute(statements[connection.vendor], params)
        row = cursor.fetchone()
        if row is None:
            return None
        if connection.vendor != "postgresql":
            cursor.execute(statements["sqlite_audit"], {**params, "id": row[0], "version": row[1]})
        if hooks:
            instance = Instance.objects.get(pk=row[0])
            for hook in hooks:
                hook(instance, Status.DRAFTED, Status.IN_REFINEMENT)
    return row[0], row[1]


def instance_create(
    *,
    project_id: int,
    actor: AbstractBaseUser | None,
    initial_status: str = Status.DRAFTED,
    reason: str = "",
    **fields: Any,
) -> Instance:
    """Create an instance in its first status (drafted, or validated for imported gold data) with an audit row."""
    return instances_create(
        project_id=project_id, actor=actor, initial_status=initial_status, reason=reason, rows=[fields]
    )[0]


@transaction.atomic
def instances_create(
    *,
    project_id: int,
    actor: AbstractBaseUser | None,
    rows: list[dict[str, Any]],
    initial_status: str = Status.DRAFTED,
    reason: str = "",
) -> list[Instance]:
    """`instance_create` of many (each of `rows` holds one instance's fields, `relevant_tables` a list of table
    ids or tables), in a few bulk inserts whatever their number: the instances in this order, their audit rows and
    their relevant tables."""
    if initial_status not in (Status.DRAFTED, Status.VALIDATED):
        raise InvalidInput(f"A new instance starts as drafted or validated, not {initial_status}.")
    tables = [row.pop("relevant_tables", None) or [] for row in rows]
    instances = Instance.objects.bulk_create(
        [Instance(project_id=project_id, status=initial_status, version=1, **row) for row in rows]
    )
    Instance.relevant_tables.through.objects.bulk_create(
        [
            Instance.relevant_tables.through(instance_id=instance.pk, table_id=getattr(table, "pk", table))
            for instance, chosen in zip(instances, tables, strict=True)
            for table in dict.fromkeys(chosen)
        ]
    )
    TransitionEvent.objects.bulk_create(
        [
            TransitionEvent(
                instance=instance, actor=actor, from_status="", to_status=initial_status, version=1, reason=reason
            )
            for instance in instances
        ]
    )
    return instances


# How many instances one statement of a batched transition names (well under SQLite's bound on parameters).
BULK_TRANSITION_CHUNK = 1000


@transaction.atomic
def instances_transition_bulk(
    *,
    instance_ids: list[int],
    target: str,
    expected_status: str,
    expected_versions: Mapping[int, int] | None = None,
    reason: str = "",
) -> int:
    """Move many instances from `expected_status` to `target` by a system move (actor None in the audit), a
    chunk at a time: per chunk one conditional UPDATE (`WHERE id IN (…) AND status = expected`), one read of the
    new versions and one bulk insert of the audit rows, so the cost grows per chunk, not per item. The same
    transition table decides: only a system move without guards, effects or hooks may be batched (one with rules
    is done one by one, by `instance_transition`, so no rule is ever skipped). All or nothing: if any instance is no
    longer in `expected_status` (a concurrent change), or not at its version in `expected_versions` (id → version)
    when given, Conflict is raised naming it and the whole transaction is rolled back. Returns how many moved."""
    transition = _table_row(expected_status, target)
    if (expected_status, target) not in SYSTEM_TRANSITIONS:
        raise NotPermitted(f"Only system moves are batched; {transition.description} is done one by one.")
    if transition.guards or transition.effects or _hooks_for(target):
        raise NotPermitted(f"{transition.description} has rules of its own: it is done one by one.")
    ids = list(dict.fromkeys(instance_ids))
    extra: dict[str, Any] = {} if target in LEASED_STATUSES else {"lease_expires_at": None}
    for start in range(0, len(ids), BULK_TRANSITION_CHUNK):
        chunk = ids[start : start + BULK_TRANSITION_CHUNK]
        updated = Instance.objects.filter(pk__in=chunk, status=expected_status).update(
            status=target, version=F("version") + 1, updated_at=timezone.now(), **extra
        )
        if updated != len(chunk):
            changed = sorted(
                set(chunk) - set(Instance.objects.filter(pk__in=chunk, status=target).values_list("pk", flat=True))
            )
            lost = len(chunk) - updated
            raise Conflict(
                f"{lost} instance{pluralize(lost)} {pluralize(lost, 'is,are')} no longer {expected_status} "
                f"(changed meanwhile): "
                f"{', '.join(map(str, changed[:20]))}. Nothing was moved.",
                detail={"instance_ids": changed},
            )
        rows = list(Instance.objects.filter(pk__in=chunk).values_list("pk", "version"))
        if expected_versions is not None:
            stale = sorted(pk for pk, v in rows if expected_versions.get(pk) != v - 1)
            if stale:
                raise Conflict(
                    f"{len(stale)} instance{pluralize(len(stale))} {pluralize(len(stale), 'was,were')} edited "
                    f"meanwhile: {', '.join(map(str, stale[:20]))}. "
                    "Nothing was moved.",
                    detail={"instance_ids": stale},
                )
        TransitionEvent.objects.bulk_create(
            [
                TransitionEvent(
                    instance_id=pk, actor=None, from_status=expected_status, to_status=target, version=v, reason=reason
                )
                for pk, v in rows
            ]
        )
    return len(ids)

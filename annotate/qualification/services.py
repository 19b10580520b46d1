"""Writes for the qualification exam: configure it, start, autosave and submit attempts; scoring runs on the server.

Gold answers are read only inside `_close` (scoring), and enter an attempt's `results` only when it is submitted.
Time limit: answers are accepted until the deadline plus a short grace for requests in flight; afterwards saves are
refused, and the attempt is closed with the answers saved before the deadline (items left empty count as wrong) —
either by the candidate's late submit or automatically the next time anyone reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from itertools import zip_longest
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.template.defaultfilters import pluralize
from django.utils import timezone

from annotate.qualification.feedback import explain_mismatch
from annotate.qualification.models import QualificationAttempt, QualificationItem, QualificationSettings
from curation.errors import Conflict, InvalidInput, NotFound, NotPermitted, number_in_range
from curation.models import Instance, Membership, Project
from curation.selectors import instances_visible_to
from curation.services.projects import require_role
from curation.states import Role, Status
from curation.toolkit.answer_form import is_short_form
from scoring.metrics.scitat import exact_match

GOLD_STATUSES = (Status.VALIDATED, Status.RELEASED)
SUBMIT_GRACE = timedelta(seconds=30)
MAX_ITEMS_PER_ANSWER = 30
MAX_ANSWER_ITEM_LENGTH = 2000
MAX_RATIONALE_LENGTH = 10_000
MAX_EXAM_SIZE = 200
# The exam's items are a gold *pool* this many times the exam size (when there is enough gold): each attempt draws
# `size` items from it, avoiding the candidate's earlier items, so a retry is not passed by copying the feedback.
GOLD_POOL_FACTOR = 3
# A setting not given, left as it is (for the time limit, whose None means "no limit").
UNSET: Any = object()


def settings_of(project: Project) -> QualificationSettings:
    """The project's exam settings, or unsaved defaults when a manager has not configured one."""
    return QualificationSettings.objects.filter(project=project).first() or QualificationSettings(project=project)


def _round_robin(groups: dict[str, list[Instance]], wanted: int) -> list[Instance]:
    """One of each group in turn (groups in key order) until `wanted` are picked or none is left."""
    turns = zip_longest(*(groups[key] for key in sorted(groups)))
    return [instance for turn in turns for instance in turn if instance is not None][:wanted]


def gold_candidates(project: Project) -> list[Instance]:
    """Instances fit to be exam items: validated or released, with a question and at least one answer item."""
    instances = (
        Instance.objects.without_probes()
        .filter(project=project, status__in=GOLD_STATUSES)
        .exclude(question="")
        .select_related("reasoning_type__parent")
        .order_by("id")
    )
    return [instance for instance in instances if isinstance(instance.answer, list) and instance.answer]


def auto_pick(project: Project, size: int) -> list[Instance]:
    """`size` gold instances, spread over the top-level reasoning types in turn, short-form answers first.

    Short-form first because the exam is scored with EM, which SciTaT applies to short-form answers only; free-form
    items are used only when there are not enough short-form ones. Within each, unreleased items first: a released
    one's answer is public wherever its release went. Deterministic: ordered by type code, then id.
    """
    short: dict[str, list[Instance]] = {}
    free: dict[str, list[Instance]] = {}
    # Stable: the id order holds among the validated ones and among the released ones.
    for instance in sorted(gold_candidates(project), key=lambda i: i.status == Status.RELEASED):
        bucket = short if is_short_form([str(item) for item in instance.answer]) else free
        kind = instance.reasoning_type  # grouped by its top-level type
        bucket.setdefault("" if kind is None else (kind.parent or kind).code, []).append(instance)
    picked = _round_robin(short, size)
    return picked + _round_robin(free, size - len(picked))


@transaction.atomic
def qualification_configure(
    *,
    project: Project,
    actor: AbstractBaseUser,
    instance_ids: list[int] | None = None,
    keep_items: bool = False,
    threshold: float | None = None,
    size: int | None = None,
    time_limit_minutes: int | None = UNSET,
    retry_delay_hours: int | None = None,
) -> QualificationSettings:
    """Set the exam (managers only): the gold pool is the explicit items, or up to GOLD_POOL_FACTOR × `size`
    auto-picked ones when `instance_ids` is None; each attempt draws `size` of them (`exam_items_draw`).

    Explicit items without a `size` make an exam of all of them (no pool to draw other items from).
    `keep_items=True` with `instance_ids=None` changes only the numbers. Open attempts keep the items they started with.
    """
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="configure the qualification exam")
    exam, _ = QualificationSettings.objects.select_for_update().get_or_create(project=project)
    for name, value, low, high, label, kind in (
        ("threshold", threshold, 0.01, 1.0, "Pass threshold", float),
        ("size", size, 1, MAX_EXAM_SIZE, "Items per attempt", int),
        ("time_limit_minutes", time_limit_minutes, 1, 24 * 60, "Time limit (minutes)", int),
        ("retry_delay_hours", retry_delay_hours, 0, 24 * 365, "Retry delay (hours)", int),
    ):
        if value is not None and value is not UNSET:
            setattr(exam, name, kind(number_in_range(name, value, low, high, label=label)))
    if time_limit_minutes is None:  # no time limit (UNSET: left as it is)
        exam.time_limit_minutes = None

    if instance_ids is not None:
        wanted = list(dict.fromkeys(int(pk) for pk in instance_ids))
        if not wanted:
            raise InvalidInput("Pick at least one instance for the exam.", detail={"field": "instance_ids"})
        if len(wanted) > MAX_EXAM_SIZE:
            raise InvalidInput(f"An exam has at most {MAX_EXAM_SIZE} items.", detail={"field": "instance_ids"})
        fit = {instance.pk for instance in gold_candidates(project) if instance.pk in set(wanted)}
        unfit = [pk for pk in wanted if pk not in fit]
        if unfit:
            raise InvalidInput(
                "Exam items must be validated or released instances of this project with a question and an answer; "
                f"these are not: {', '.join(map(str, unfit))}.",
                detail={"field": "instance_ids", "invalid_ids": unfit},
            )
        if size is None:
            exam.size = len(wanted)
    elif not (keep_items and exam.item_links.exists()):
        picked = auto_pick(project, exam.size * GOLD_POOL_FACTOR)
        if not picked:
            raise InvalidInput(
                "There are no validated instances with a question and an answer to build the exam from; "
                "import or validate some first.",
                detail={"field": "instance_ids"},
            )
        wanted = [instance.pk for instance in picked]
    else:
        wanted = None
    pool = len(wanted) if wanted is not None else exam.item_links.count()
    if exam.size > pool:
        raise InvalidInput(
            f"Items per attempt ({exam.size}) is more than the {pool} gold item{pluralize(pool)} of the pool: every "
            f"attempt would be shorter than asked. Set at most {pool} items per attempt, or add gold to the pool.",
            detail={"field": "size", "pool": pool, "size": exam.size},
        )
    exam.save()
    if wanted is not None:
        QualificationItem.objects.filter(settings=exam).delete()
        QualificationItem.objects.bulk_create(
            QualificationItem(settings=exam, instance_id=pk, order=order) for order, pk in enumerate(wanted)
        )
    return exam


def retry_at(*, project: Project, user: AbstractBaseUser, exam: QualificationSettings) -> datetime | None:
    """When a candidate whose last attempt failed may start again (None: now)."""
    last = (
        QualificationAttempt.objects.filter(project=project, user=user, submitted_at__isnull=False)
        .order_by("-submitted_at")
        .first()
    )
    if last is None or last.passed or not exam.retry_delay_hours:
        return None
    when = last.submitted_at + timedelta(hours=exam.retry_delay_hours)
    return when if when > timezone.now() else None


def items_seen_in_exams(user: AbstractBaseUser) -> set[int]:
    """Every gold instance the user was shown in any exam attempt (open or submitted, in any project): hidden gold
    must not serve them again, or the annotator would recognise the question (and may remember its answer)."""
    attempts = QualificationAttempt.objects.filter(user_id=user.pk).values_list("item_ids", flat=True)
    return {pk for item_ids in attempts for pk in (item_ids or []) if isinstance(pk, int)}


def exam_items_draw(*, pool: list[int], size: int, seen: set[int]) -> list[int]:
    """`size` items of the pool (in pool order) the candidate was never shown, or [] when fewer remain: a retry
    never serves an item whose answer the candidate saw in an earlier attempt's feedback."""
    fresh = [pk for pk in pool if pk not in seen]
    return fresh[:size] if len(fresh) >= size else []


def exam_pool_capacity(exam: QualificationSettings) -> dict[str, int]:
    """What the pool allows each candidate: attempts of `size` unseen items (the first and its retries; none when the
    pool holds fewer than `size`), and how much gold to add for one more attempt."""
    pool = exam.item_links.count() if exam.pk else 0
    size = max(exam.size, 1)
    attempts = pool // size
    return {
        "pool": pool,
        "size": size,
        "attempts": attempts,
        "retries": max(attempts - 1, 0),
        "to_add": size - pool % size,
    }


def attempt_start(*, project: Project, user: AbstractBaseUser) -> QualificationAttempt:
    """Start (or resume the open) exam attempt of an unqualified annotator, after any retry delay has passed."""
    require_role(user=user, project=project, roles=(Role.ANNOTATOR,), action="take the qualification exam")
    membership = Membership.objects.get(user=user, project=project, role=Role.ANNOTATOR)
    if membership.is_qualified:
        raise Conflict("You are already qualified in this project; there is no exam to take.")
    open_attempts = QualificationAttempt.objects.filter(project=project, user=user, submitted_at=None)
    attempts_close_expired(attempts=open_attempts.all())  # a copy: the read below is fresh
    if (open_attempt := open_attempts.first()) is not None:
        return open_attempt
    membership.refresh_from_db()  # an attempt just closed may have qualified them
    if membership.is_qualified:
        raise Conflict("Your previous attempt was scored when its time ran out, and you passed.")
    exam = settings_of(project)
    when = retry_at(project=project, user=user, exam=exam)
    if when is not None:
        raise NotPermitted(
            f"Your last attempt did not pass. You may try again from {when:%Y-%m-%d %H:%M} UTC "
            f"(the retry delay is {exam.retry_delay_hours} hours); read the feedback and the guidelines meanwhile.",
            detail={"retry_at": when.isoformat()},
        )
    pool = list(exam.item_links.order_by("order", "id").values_list("instance_id", flat=True)) if exam.pk else []
    if not pool:
        raise Conflict("The exam of this project is not set up yet; ask a manager to choose its items.")
    # Items the candidate can already open elsewhere (as author, reviewer, verifier or manager) would test nothing.
    visible = set(instances_visible_to(user).filter(pk__in=pool).values_list("pk", flat=True))
    seen = items_seen_in_exams(user)
    reachable = [pk for pk in pool if pk not in visible]
    # A first attempt takes what a small pool has; a retry needs a whole exam of unseen items.
    is_retry = QualificationAttempt.objects.filter(project=project, user=user).exists()
    size = exam.size if is_retry else min(exam.size, len(reachable))
    item_ids = exam_items_draw(pool=reachable, size=size, seen=seen)
    if reachable and not item_ids:
        unseen = sum(1 for pk in reachable if pk not in seen)
        raise NotPermitted(
            f"A retry needs {exam.size} exam items you have not been shown yet, and only {unseen} remain: the exam "
            "never asks again what its feedback answered. A manager must add gold to the exam's pool first.",
            detail={"reason": "exam_pool_exhausted", "unseen": unseen, "size": exam.size},
        )
    if not item_ids:
        raise NotPermitted(
            "You can already see every exam item through your other work or roles, so the exam would not measure "
            "anything; ask a manager to qualify you directly."
        )
    try:
        with transaction.atomic():
            attempt = QualificationAttempt.objects.create(project=project, user=user, item_ids=item_ids, answers={})
            if exam.time_limit_minutes:
                attempt.deadline_at = attempt.started_at + timedelta(minutes=exam.time_limit_minutes)
                attempt.save(update_fields=["deadline_at"])
            return attempt
    except IntegrityError:  # a second tab started one at the same moment: resume that one
        return QualificationAttempt.objects.get(project=project, user=user, submitted_at=None)


def _own_attempt(*, attempt_id: int, user: AbstractBaseUser) -> QualificationAttempt:
    """The candidate's own attempt, locked for a write."""
    attempts = QualificationAttempt.objects.select_related("project").select_for_update()
    attempt = attempts.filter(pk=attempt_id, user_id=user.pk).first() if user.is_authenticated else None
    if attempt is None:
        raise NotFound(f"No exam attempt {attempt_id} of yours.")
    return attempt


def _is_open_for_answers(attempt: QualificationAttempt, now: datetime) -> bool:
    return attempt.deadline_at is None or now <= attempt.deadline_at + SUBMIT_GRACE


def clean_answers(attempt: QualificationAttempt, answers: Any) -> dict[str, dict[str, Any]]:
    """Validate `{instance id: {"answer": [str], "rationale": str}}` (or `{id: [str]}`) against the attempt's items."""
    if not isinstance(answers, Mapping):
        raise InvalidInput("answers must be an object keyed by item id.", detail={"field": "answers"})
    allowed = {str(pk) for pk in attempt.item_ids}
    cleaned: dict[str, dict[str, Any]] = {}
    for key, value in answers.items():
        key = str(key)
        if key not in allowed:
            raise InvalidInput(f"Item {key} is not part of this exam.", detail={"field": "answers"})
        if isinstance(value, list):
            value = {"answer": value}
        if not isinstance(value, Mapping):
            raise InvalidInput(f"The answer to item {key} must be an object or a list.", detail={"field": "answers"})
        items = value.get("answer", [])
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, list) or not all(isinstance(item, str | int | float) for item in items):
            raise InvalidInput(f"The answer to item {key} must be a list of strings.", detail={"field": "answers"})
        items = [str(item).strip() for item in items if str(item).strip()]
        if len(items) > MAX_ITEMS_PER_ANSWER or any(len(item) > MAX_ANSWER_ITEM_LENGTH for item in items):
            raise InvalidInput(
                f"An answer has at most {MAX_ITEMS_PER_ANSWER} items of {MAX_ANSWER_ITEM_LENGTH} characters.",
                detail={"field": "answers"},
            )
        rationale = value.get("rationale", "")
        if not isinstance(rationale, str) or len(rationale) > MAX_RATIONALE_LENGTH:
            raise InvalidInput(
                f"A rationale is text of at most {MAX_RATIONALE_LENGTH} characters.", detail={"field": "answers"}
            )
        cleaned[key] = {"answer": items, "rationale": rationale.strip()}
    return cleaned


@transaction.atomic
def attempt_save(*, attempt_id: int, user: AbstractBaseUser, answers: Any) -> QualificationAttempt:
    """Autosave the candidate's own answers (merged per item) while the attempt is open and in time."""
    attempt = _own_attempt(attempt_id=attempt_id, user=user)
    if attempt.submitted_at is not None:
        raise Conflict("This attempt has been submitted; answers can no longer change.")
    if not _is_open_for_answers(attempt, timezone.now()):
        raise Conflict(
            "Time is up: answers saved before the deadline count; submit to see your result.",
            detail={"deadline_at": attempt.deadline_at.isoformat()},
        )
    attempt.answers = {**(attempt.answers or {}), **clean_answers(attempt, answers)}
    attempt.save(update_fields=["answers"])
    return attempt


def _item_result(order: int, instance: Instance | None, instance_id: int, given: Mapping[str, Any]) -> dict[str, Any]:
    mine = [str(item) for item in given.get("answer", [])]
    if instance is None:
        return {"instance_id": instance_id, "order": order, "answer": mine, "gold": [], "em": None, "reason": ""}
    gold = [str(item) for item in instance.answer]
    em = exact_match(mine, gold)
    reason = explain_mismatch(mine, gold)
    if em and mine != gold:
        reason = "Correct: equal to the gold answer after normalisation (case, order, articles, number format)."
    return {
        "instance_id": instance_id,
        "order": order,
        "question": instance.question,
        "answer": mine,
        "rationale": str(given.get("rationale", "")),
        "gold": gold,
        "gold_rationale": instance.rationale,
        "em": em,
        "reason": reason,
    }


def _close(attempt: QualificationAttempt, *, answers: Any, now: datetime) -> QualificationAttempt:
    """Score and close an open attempt exactly once (compare-and-set on submitted_at); qualify on a pass."""
    is_late = not _is_open_for_answers(attempt, now)
    saved = dict(attempt.answers or {})
    if answers is not None and not is_late:
        saved.update(clean_answers(attempt, answers))
    instances = Instance.objects.in_bulk(attempt.item_ids)
    results = [
        _item_result(order, instances.get(pk), pk, saved.get(str(pk), {})) for order, pk in enumerate(attempt.item_ids)
    ]
    scored = [result["em"] for result in results if result["em"] is not None]
    score = sum(scored) / len(scored) if scored else 0.0
    exam = settings_of(attempt.project)
    # A float mean of 19/20 is 0.95 exactly, but a 0.9500000001 threshold typed in a form must not fail it.
    passed = score + 1e-9 >= exam.threshold
    if is_late:
        for result in results:
            if not result["answer"]:
                result["reason"] = "No answer was saved before the time limit."
    changed = QualificationAttempt.objects.filter(pk=attempt.pk, submitted_at=None).update(
        answers=saved, submitted_at=now, score=score, passed=passed, results=results
    )
    if changed != 1:
        raise Conflict("This attempt was submitted already.")
    if passed:
        Membership.objects.filter(
            user_id=attempt.user_id, project_id=attempt.project_id, role=Role.ANNOTATOR, is_qualified=False
        ).update(is_qualified=True, qualified_at=now)
    attempt.refresh_from_db()
    return attempt


@transaction.atomic
def attempt_submit(*, attempt_id: int, user: AbstractBaseUser, answers: Any = None) -> QualificationAttempt:
    """Submit the candidate's own attempt: EM per item against the gold answers, feedback, pass/fail, qualification."""
    attempt = _own_attempt(attempt_id=attempt_id, user=user)
    if attempt.submitted_at is not None:
        raise Conflict("This attempt has been submitted already; see its results.")
    return _close(attempt, answers=answers, now=timezone.now())


def attempts_close_expired(*, attempts: Iterable[QualificationAttempt]) -> int:
    """Close open attempts whose time ran out, scoring the answers saved in time; returns how many closed."""
    now = timezone.now()
    closed = 0
    for attempt in attempts:
        if attempt.submitted_at is None and not _is_open_for_answers(attempt, now):
            try:
                with transaction.atomic():
                    _close(attempt, answers=None, now=now)
                closed += 1
            except Conflict:  # closed concurrently by the candidate or another reader
                continue
    return closed

"""The refinement workspace's writes: autosave, submit with validation, skip, context removals, work time."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotate.work.models import WorkTime
from annotate.work.queue import lease_renew
from curation.answer_types import ANSWER_TYPES, is_computed_percentage
from curation.errors import InvalidInput, NotFound, NotPermitted
from curation.models import Instance, Table, TransitionEvent
from curation.serializers import DATABASE_ID_MAX
from curation.services.instances import answer_kind_evidence, instance_edit
from curation.services.lifecycle import instance_transition
from curation.states import Status

# A ping adds the time since the previous one only when that gap is short: a tab left open is not work.
MAX_PING_GAP = timedelta(seconds=90)


def suggested_answer_kind(instance: Instance, tables: list[Table] | None = None) -> dict[str, str]:
    """The answer type and scale suggested for an instance from its current answer and its relevant tables
    (else its context's tables): each value ("" when evidence is absent or conflicts) and its evidence. A caller
    that has read those tables already passes them as `tables`."""
    if tables is None:
        tables = list(instance.relevant_tables.all())
        if not tables and instance.context_id:
            tables = list(instance.context.tables.all())
    evidence = answer_kind_evidence(
        question=instance.question,
        rationale=instance.rationale,
        answer=instance.answer,
        tables=tables,
        actions=instance.essential_actions or [],
    )
    return {
        "answer_type": evidence["answer_type"].value or "",
        "has_answer_type": evidence["answer_type"].value is not None,
        "answer_type_evidence": evidence["answer_type"].evidence,
        # "" is a scale (None), so whether one is suggested is said apart.
        "scale": evidence["scale"].value or "",
        "has_scale": evidence["scale"].value is not None,
        "scale_evidence": evidence["scale"].evidence,
    }


def submission_problems(instance: Instance, marked: dict[str, set[int]] | None = None) -> list[dict[str, str]]:
    """What keeps an instance from being submitted, as {field, message} for the form to show (`marked`: the ids of its
    relevant and of its wrongly extracted tables, when the caller has read them already). An unanswerable question
    needs the reason the context cannot answer it, and no answer (its gold is the abstention: an answer left in would
    be exported as if it held)."""
    if marked is None:
        relevant = set(instance.relevant_tables.values_list("id", flat=True))
        excluded = set(instance.excluded_tables.values_list("id", flat=True))
    else:
        relevant, excluded = marked["relevant"], marked["excluded"]
    has_answer = any(item.strip() for item in instance.answer)
    source = instance.answer_source
    checks = [(not instance.question.strip(), "question", "Write the question.")]
    if not instance.is_answerable:
        checks += [
            (
                not instance.unanswerable_reason.strip(),
                "unanswerable_reason",
                "Say why this context cannot answer the question (what is missing).",
            ),
            (has_answer, "answer", "A question marked not answerable has no answer: remove the answer items."),
        ]
    else:
        checks += [
            (not has_answer, "answer", "Give at least one answer item."),
            (any(not item.strip() for item in instance.answer), "answer", "Remove the empty answer items."),
            (not instance.answer_form, "answer_form", "Choose short-form or free-form."),
            (not source, "answer_source", "Choose the answer source: Text, Table or Table-Text."),
            (
                instance.answer_type not in ANSWER_TYPES,
                "answer_type",
                "Choose the answer type: span, multi-span, arithmetic or count.",
            ),
            (instance.scale is None, "scale", "Choose the scale (None when the answer has no unit scale)."),
            (
                instance.scale not in (None, "percent")
                and is_computed_percentage(instance.answer_type, instance.answer),
                "scale",
                "The computed answer is a percentage: choose the scale Percent.",
            ),
            (
                source in (Instance.AnswerSource.TABLE, Instance.AnswerSource.TABLE_TEXT) and not relevant,
                "relevant_tables",
                "The answer comes from a table: mark the tables it comes from as relevant.",
            ),
            (
                source == Instance.AnswerSource.TEXT and bool(relevant),
                "relevant_tables",
                "The source is Text but tables are marked relevant: choose Table-Text or unmark them.",
            ),
        ]
    checks.append(
        (bool(relevant & excluded), "relevant_tables", "A table marked as wrongly extracted cannot be relevant.")
    )
    return [{"field": field, "message": message} for failed, field, message in checks if failed]


NOT_HELD = "You do not hold this instance any more; take the next one from your queue."


def held(instance: Instance | None, *, user: AbstractBaseUser, instance_id: int) -> Instance:
    """`instance` (row `instance_id` as `user` may see it, or None) if `user` holds it in refinement: the one rule of
    every read and write of the workspace. Whoever once took it but holds it no more (reaped, submitted, skipped) is
    told so (NotPermitted, NOT_HELD); anyone else, staff included, finds nothing of theirs (NotFound), as for an id
    that does not exist."""
    if instance is not None and instance.author_id == user.pk and instance.status == Status.IN_REFINEMENT:
        return instance
    # (An id past the 64-bit range was never anyone's: SQLite would overflow on it rather than find nothing.)
    took_it = TransitionEvent.objects.filter(instance_id=instance_id, actor_id=user.pk, to_status=Status.IN_REFINEMENT)
    if instance_id <= DATABASE_ID_MAX and took_it.exists():
        raise NotPermitted(NOT_HELD)
    raise NotFound(f"No instance {instance_id} in your work.")


def instance_held(instance_id: int, user: AbstractBaseUser) -> Instance:
    """The instance `user` holds in refinement (`held`), for the writes: autosave, submit, skip, ping."""
    return held(Instance.objects.visible_to(user).filter(pk=instance_id).first(), user=user, instance_id=instance_id)


@transaction.atomic
def workspace_autosave(
    *, instance_id: int, user: AbstractBaseUser, expected_version: int, fields: dict[str, Any], note: str = ""
) -> Instance:
    """Save the holder's edit as an autosave revision and renew the lease; a stale version is a Conflict."""
    instance_held(instance_id, user)
    instance = instance_edit(
        instance_id=instance_id,
        actor=user,
        expected_version=expected_version,
        fields=fields,
        kind="autosave",
        note=note,
    )
    lease_renew(instance_id=instance_id, user=user)
    work_ping(instance_id=instance_id, user=user, activity="refine")
    return instance


@transaction.atomic
def workspace_submit(
    *, instance_id: int, user: AbstractBaseUser, expected_version: int, fields: dict[str, Any] | None = None
) -> Instance:
    """Save any last edit, check the instance is complete, and hand it to round-one review."""
    instance = instance_held(instance_id, user)
    if fields:
        instance = instance_edit(
            instance_id=instance_id, actor=user, expected_version=expected_version, fields=fields, kind="edit"
        )
        expected_version = instance.version
    submitted = instance_transition(
        instance_id=instance_id,
        target=Status.SUBMITTED,
        actor=user,
        expected_status=Status.IN_REFINEMENT,
        expected_version=expected_version,
        reason="submitted by the annotator",
    )
    work_ping(instance_id=instance_id, user=user, activity="refine")
    return submitted


def submission_complete(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """Guard of the transition table (submit, approve, validate): an incomplete instance goes no further,
    whichever door asks (registered in AnnotateConfig.ready)."""
    problems_refuse(submission_problems(instance))


def problems_refuse(problems: list[dict[str, str]]) -> None:
    """Refuse to submit work with problems (`submission_problems`: an instance's, or a second copy's), naming them."""
    if problems:
        raise InvalidInput(
            "Not ready to submit: " + " ".join(p["message"] for p in problems), detail={"problems": problems}
        )


@transaction.atomic
def workspace_skip(*, instance_id: int, user: AbstractBaseUser, reason: str) -> Instance:
    """Give a fresh draft back to the queue with a reason; autosaved work stays in the revisions."""
    instance = instance_held(instance_id, user)
    reason = reason.strip()
    if not reason:
        raise InvalidInput("Say why you skip this instance (it helps whoever takes it next).")
    return instance_transition(
        instance_id=instance_id,
        target=Status.DRAFTED,
        actor=user,
        expected_status=Status.IN_REFINEMENT,
        expected_version=instance.version,
        reason=f"skipped: {reason}",
    )


@transaction.atomic
def work_ping(*, instance_id: int, user: AbstractBaseUser, activity: str) -> float:
    """Add the time since the last ping, when short enough to be work, to the user's total on the instance."""
    now = timezone.now()
    record, _ = WorkTime.objects.select_for_update().get_or_create(
        user=user, instance_id=instance_id, activity=activity
    )
    if record.last_ping_at is not None:
        gap = now - record.last_ping_at
        if gap <= MAX_PING_GAP:
            record.active_seconds += gap.total_seconds()
    record.last_ping_at = now
    record.save(update_fields=["active_seconds", "last_ping_at"])
    return record.active_seconds

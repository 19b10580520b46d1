"""Writes of double annotation: configure it, draw the instances (seeded), serve the second copy in the queue to
someone other than the first annotator, save and submit the copy, and the round-one verifier's keep/merge decision.

The pipeline's rules stay in the lifecycle: the transition table names this package's guards (curation.states:
BOTH_VERSIONS_IN, VERSION_CHOSEN, NOT_OWN_WORK), registered in AnnotateConfig.ready, so every door (page,
API, generic transition endpoint) meets them. The copy is never an Instance: it cannot be queued, released or
exported.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotate.agreement.models import AgreementSettings, DoubleAnnotation
from annotate.work.queue import lease_deadline
from annotate.work.workspace import problems_refuse, submission_problems
from curation.errors import Conflict, InvalidInput, NotFound, NotPermitted
from curation.members.selectors import is_qualified_annotator
from curation.models import Instance, Project
from curation.services.instances import (
    answer_kind_suggested,
    clean_answer_fields,
    context_table_ids,
    instance_adopt,
    revision_fields,
)
from curation.services.lifecycle import instance_is_resumed
from curation.services.projects import require_role
from curation.states import Role, Status

# The fields two versions are compared on and a verifier chooses between, in the order a reader scans them.
FIELD_LABELS = {
    "question": "Question",
    "rationale": "Rationale",
    "answer": "Answer",
    "answer_form": "Answer form",
    "answer_source": "Answer source",
    "answer_type": "Answer type",
    "scale": "Scale",
    "reasoning_type_id": "Reasoning type",
    "relevant_table_ids": "Relevant tables",
}
CHOSEN_FIELDS = tuple(FIELD_LABELS)
OPEN_STATES = (DoubleAnnotation.State.WAITING, DoubleAnnotation.State.IN_REFINEMENT)
MAX_SEED = 2**31 - 1
DOUBLE_FRACTION_LABEL = "Share of drafts"  # as the dashboard's form, the API and the refusals name it


def agreement_settings_of(project: Project) -> AgreementSettings:
    """The project's double-annotation settings, or unsaved defaults (off)."""
    return AgreementSettings.objects.filter(project=project).first() or AgreementSettings(project=project)


@transaction.atomic
def agreement_configure(
    *, project: Project, actor: AbstractBaseUser, double_fraction: float | None = None, seed: int | None = None
) -> AgreementSettings:
    """Set the share of drafts refined twice and the seed of the selection (managers only; both doors check the
    values with `AgreementSettingsSerializer`)."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="configure double annotation")
    agreement, _ = AgreementSettings.objects.select_for_update().get_or_create(project=project)
    if double_fraction is not None:
        agreement.double_fraction = float(double_fraction)
    if seed is not None:
        agreement.seed = seed
    agreement.save()
    return agreement


def is_drawn(*, seed: int, fraction: float, instance_id: int) -> bool:
    """The selection: one seeded draw per instance, so the same seed and fraction pick the same instances."""
    return random.Random(f"{seed}:{instance_id}").random() < fraction


def _copy_start(instance: Instance) -> dict[str, Any]:
    """Where the second copy starts: the original draft (question, rationale, answer as drafted, the context's
    reasoning type, the answer kind suggested for the draft), never the first annotator's work."""
    draft = instance.draft or {}
    question = str(draft.get("question") or "")
    rationale = str(draft.get("rationale") or "")
    answer = [str(item) for item in draft.get("answer") or []]
    tables = list(instance.context.tables.all()) if instance.context_id else []
    suggested = answer_kind_suggested(
        question=question, rationale=rationale, answer=answer, tables=tables, actions=instance.essential_actions or []
    )
    reasoning_type_id = (instance.context.reasoning_type_id if instance.context_id else None) or (
        instance.reasoning_type_id
    )
    return {
        "question": question,
        "rationale": rationale,
        "answer": answer,
        "answer_form": "",
        "answer_source": "",
        "answer_type": suggested["answer_type"],
        "scale": suggested["scale"],
        "reasoning_type_id": reasoning_type_id,
        "relevant_table_ids": [],
    }


def double_after_submit(instance: Instance, source: str, target: str) -> None:
    """After-transition hook (into submitted): on an instance's first submission, draw it for double annotation
    and, when drawn, freeze that submission and open the copy for a second annotator. Resubmissions after a change
    request never draw again."""
    if source != Status.IN_REFINEMENT or instance.author_id is None:
        return
    agreement = AgreementSettings.objects.filter(project_id=instance.project_id).first()
    if agreement is None or agreement.double_fraction <= 0:
        return
    if DoubleAnnotation.objects.filter(instance_id=instance.pk).exists() or instance_is_resumed(
        instance_id=instance.pk
    ):
        return
    if not is_drawn(seed=agreement.seed, fraction=agreement.double_fraction, instance_id=instance.pk):
        return
    if not Instance.objects.without_probes().filter(pk=instance.pk).exists():
        return  # hidden gold measures one annotator against gold, not two against each other
    fields = {name: value for name, value in revision_fields(instance).items() if name in CHOSEN_FIELDS}
    DoubleAnnotation.objects.create(
        project_id=instance.project_id,
        instance=instance,
        batch_id=instance.batch_id,
        first_annotator_id=instance.author_id,
        first_fields=fields,
        **_copy_start(instance),
    )


def double_after_discard(instance: Instance, source: str, target: str) -> None:
    """After-transition hook (into discarded): a copy still open for a discarded instance is withdrawn, so nobody is
    served work that no longer leads anywhere (a restored instance is drawn afresh on its next first submission)."""
    DoubleAnnotation.objects.filter(instance_id=instance.pk, state__in=OPEN_STATES).delete()


@dataclass(frozen=True)
class CopyServed:
    """A second copy the queue gave an annotator: which, its lease, and whether it was already theirs."""

    copy_id: int
    lease_expires_at: Any
    how: str  # "held" or "claimed"


def copies_pending(user: AbstractBaseUser) -> Exists:
    """For the queue's first look (over the project row): the project has an open copy (waiting, or being
    refined — perhaps by this user)."""
    return Exists(DoubleAnnotation.objects.filter(project_id=OuterRef("pk"), state__in=OPEN_STATES))


def copy_serve(*, project_id: int, user: AbstractBaseUser) -> CopyServed | None:
    """Called by the queue before a fresh draft, when `copies_pending` holds and the annotator holds no instance and
    has nothing sent back: the copy this annotator holds, else an open copy of someone else's instance (waiting, or
    a lease that ran out), claimed by one conditional UPDATE. Never the first annotator's own instance (also a
    database constraint); on PostgreSQL the pick skips rows others are claiming. Only for a qualified annotator."""
    holding = DoubleAnnotation.objects.filter(
        project_id=project_id, second_annotator_id=user.pk, state=DoubleAnnotation.State.IN_REFINEMENT
    )
    held = holding.first()
    if held is not None:
        deadline = lease_deadline()
        DoubleAnnotation.objects.filter(pk=held.pk, state=DoubleAnnotation.State.IN_REFINEMENT).update(
            lease_expires_at=deadline
        )
        return CopyServed(held.pk, deadline, "held")
    if not is_qualified_annotator(project=project_id, user=user):
        return None
    now = timezone.now()
    open_copies = (
        DoubleAnnotation.objects.filter(project_id=project_id)
        .filter(
            Q(state=DoubleAnnotation.State.WAITING)
            | Q(state=DoubleAnnotation.State.IN_REFINEMENT, lease_expires_at__lt=now)
        )
        .exclude(first_annotator_id=user.pk)
        .order_by("id")
    )
    for _ in range(3):
        with transaction.atomic():
            rows = open_copies
            if connection.vendor == "postgresql":
                rows = rows.select_for_update(skip_locked=True)
            candidate = rows.only("id", "state", "second_annotator_id", "instance_id").first()
            if candidate is None:
                return None
            deadline = lease_deadline()
            changes: dict[str, Any] = {
                "state": DoubleAnnotation.State.IN_REFINEMENT,
                "second_annotator_id": user.pk,
                "lease_expires_at": deadline,
            }
            if candidate.second_annotator_id not in (None, user.pk):  # another's lease ran out: start afresh
                changes.update(_copy_start(Instance.objects.select_related("context").get(pk=candidate.instance_id)))
            try:
                with transaction.atomic():
                    changed = (
                        DoubleAnnotation.objects.filter(
                            pk=candidate.pk, state=candidate.state, second_annotator_id=candidate.second_annotator_id
                        )
                        .exclude(first_annotator_id=user.pk)
                        .update(**changes)
                    )
            except IntegrityError:  # a second tab took another copy at the same moment: that one is theirs
                changed = 0
                mine = holding.first()
                if mine is not None:
                    return CopyServed(mine.pk, mine.lease_expires_at, "held")
            if changed == 1:
                return CopyServed(candidate.pk, deadline, "claimed")
    return None


def copies_reap(*, now: datetime) -> int:
    """Send every copy whose lease ran out back to the queue (the lease beat task's part, annotate.leases_reap): it
    waits for a second annotator again; whoever takes it next starts afresh from the draft, unless it is the one who
    held it (`copy_serve`). How many."""
    expired = DoubleAnnotation.objects.filter(state=DoubleAnnotation.State.IN_REFINEMENT, lease_expires_at__lt=now)
    return expired.update(state=DoubleAnnotation.State.WAITING, lease_expires_at=None)


def held_copy(*, copy_id: int, user: AbstractBaseUser, lock: bool = False) -> DoubleAnnotation | None:
    """The second annotator's own copy while they refine it, or None (the first annotator and everyone else never
    see it through the annotators' doors)."""
    copies = DoubleAnnotation.objects.select_related("project", "instance", "instance__context")
    if lock:
        copies = copies.select_for_update(of=("self",))
    if not user.is_authenticated:
        return None
    return copies.filter(pk=copy_id, second_annotator_id=user.pk, state=DoubleAnnotation.State.IN_REFINEMENT).first()


def own_copy(*, copy_id: int, user: AbstractBaseUser, lock: bool = False) -> DoubleAnnotation:
    """`held_copy`, anything else not found."""
    copy = held_copy(copy_id=copy_id, user=user, lock=lock)
    if copy is None:
        raise NotFound(f"No item {copy_id} in your work.")
    return copy


def _clean_copy(copy: DoubleAnnotation, fields: dict[str, Any]) -> dict[str, Any]:
    unknown = set(fields) - set(CHOSEN_FIELDS)
    if unknown:
        raise InvalidInput(f"These fields cannot be edited: {', '.join(sorted(unknown))}.")
    cleaned = clean_answer_fields(dict(fields), drop_empty_items=True)
    if (
        cleaned.get("reasoning_type_id") is not None
        and not copy.project.reasoning_types.filter(pk=cleaned["reasoning_type_id"]).exists()
    ):
        raise InvalidInput("That reasoning type is not in this project.", detail={"field": "reasoning_type_id"})
    if "relevant_table_ids" in cleaned:
        ids = cleaned["relevant_table_ids"]  # a list of ids (CopyFieldsSerializer, at both doors)
        if set(ids) - context_table_ids(copy.instance):
            raise InvalidInput(
                "relevant_table_ids names tables outside this item's context.", detail={"field": "relevant_table_ids"}
            )
        cleaned["relevant_table_ids"] = sorted(set(ids))
    return cleaned


def copy_problems(copy: DoubleAnnotation) -> list[dict[str, str]]:
    """What keeps a copy from being submitted: the workspace's rule for an instance (`submission_problems`), applied
    to the copy's fields and table marks, so a copy is complete exactly when an instance would be."""
    as_instance = SimpleNamespace(**second_fields(copy), is_answerable=True, unanswerable_reason="")
    marked = {
        "relevant": set(copy.relevant_table_ids),
        "excluded": set(copy.instance.excluded_tables.values_list("id", flat=True)),
    }
    return submission_problems(as_instance, marked)  # type: ignore[arg-type]


@transaction.atomic
def copy_save(*, copy_id: int, user: AbstractBaseUser, fields: dict[str, Any]) -> DoubleAnnotation:
    """Save the second annotator's edit of their copy (checked like an instance edit) and renew its lease."""
    copy = own_copy(copy_id=copy_id, user=user, lock=True)
    cleaned = _clean_copy(copy, fields)
    for name, value in cleaned.items():
        setattr(copy, name, value)
    copy.lease_expires_at = lease_deadline()
    copy.save(update_fields=[*cleaned, "lease_expires_at"])
    return copy


@transaction.atomic
def copy_submit(*, copy_id: int, user: AbstractBaseUser, fields: dict[str, Any] | None = None) -> DoubleAnnotation:
    """Save any last edit and hand the copy in; the instance may then go to round one with both versions."""
    copy = copy_save(copy_id=copy_id, user=user, fields=fields or {})
    problems_refuse(copy_problems(copy))
    changed = DoubleAnnotation.objects.filter(
        pk=copy.pk, second_annotator_id=user.pk, state=DoubleAnnotation.State.IN_REFINEMENT
    ).update(state=DoubleAnnotation.State.SUBMITTED, submitted_at=timezone.now(), lease_expires_at=None)
    if changed != 1:
        raise Conflict("This item was submitted already.")
    copy.refresh_from_db()
    return copy


def second_fields(copy: DoubleAnnotation) -> dict[str, Any]:
    """The second version's fields, in the shape of `first_fields`."""
    return {name: getattr(copy, name) for name in CHOSEN_FIELDS}


@transaction.atomic
def double_decide(
    *, instance_id: int, user: AbstractBaseUser, expected_version: int, choices: dict[str, str]
) -> DoubleAnnotation:
    """The round-one verifier keeps the first version, the second, or merges field by field (`choices`: field →
    "first" | "second"; a field left out keeps the instance's current value). The chosen values become a revision
    of the instance (the version that continues); the other is kept here for agreement only."""
    # The instance first, by its own key (an id beyond the 64-bit range finds nothing rather than overflowing),
    # and only among those the user may see: to anyone else a second version does not exist.
    instance = Instance.objects.visible_to(user).filter(pk=instance_id).first()
    double = None
    if instance is not None:
        double = DoubleAnnotation.objects.select_for_update(of=("self",)).filter(instance=instance).first()
    if double is None or instance is None:
        raise NotFound(f"Instance {instance_id} has no second version.")
    if instance.status != Status.ROUND1_REVIEW or instance.round1_verifier_id != user.pk:
        raise NotPermitted("Only the verifier holding this round-one review may choose between its versions.")
    if user.pk in (double.first_annotator_id, double.second_annotator_id):
        raise NotPermitted("Nobody reviews their own work: you refined one of these versions.")
    if double.state not in (DoubleAnnotation.State.SUBMITTED, DoubleAnnotation.State.DECIDED):
        raise Conflict("The second version is not in yet.")
    if not isinstance(choices, dict) or not choices:
        raise InvalidInput("Say which version each field keeps (first or second).", detail={"field": "choices"})
    unknown = set(choices) - set(CHOSEN_FIELDS)
    if unknown:
        raise InvalidInput(f"No field {', '.join(sorted(unknown))} to choose.", detail={"field": "choices"})
    bad = sorted(name for name, side in choices.items() if side not in ("first", "second"))
    if bad:
        raise InvalidInput(f"Choose first or second for {', '.join(bad)}.", detail={"field": "choices", "fields": bad})
    second = second_fields(double)
    current = {name: value for name, value in revision_fields(instance).items() if name in CHOSEN_FIELDS}
    fields = {
        name: (second[name] if choices.get(name) == "second" else double.first_fields.get(name, current[name]))
        for name in CHOSEN_FIELDS
        if name in choices
    }
    kept = {"first": DoubleAnnotation.Decision.KEPT_FIRST, "second": DoubleAnnotation.Decision.KEPT_SECOND}
    sides = set(choices.values())
    is_whole = len(choices) == len(CHOSEN_FIELDS) and len(sides) == 1
    decision = kept[sides.pop()] if is_whole else DoubleAnnotation.Decision.MERGED
    changed = {name: value for name, value in fields.items() if value != current[name]}
    if changed:
        instance_adopt(
            instance_id=instance.pk,
            actor=user,
            expected_version=expected_version,
            fields=changed,
            note=f"double annotation: {DoubleAnnotation.Decision(decision).label.lower()}",
        )
    elif expected_version != instance.version:
        raise Conflict(
            "This instance was changed elsewhere; reload it and choose again.", detail={"version": instance.version}
        )
    DoubleAnnotation.objects.filter(pk=double.pk).update(
        state=DoubleAnnotation.State.DECIDED,
        decision=decision,
        decision_fields={name: choices[name] for name in CHOSEN_FIELDS if name in choices},
        decided_by=user,
        decided_at=timezone.now(),
    )
    double.refresh_from_db()
    return double


# --- The lifecycle's guards (curation.states), registered in AnnotateConfig.ready ------------------------------


def both_versions_in(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """Round one starts only once the second version is in, and never with one of its two annotators."""
    double = DoubleAnnotation.objects.filter(instance_id=instance.pk).only("state", "second_annotator_id").first()
    if double is None:
        return
    if double.state in OPEN_STATES:
        raise Conflict("This instance waits for its second, independent annotation before round one.")
    if actor is not None and actor.pk == double.second_annotator_id:
        raise NotPermitted("Nobody reviews their own work: you refined the second version of this instance.")


def version_chosen(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """A double-annotated instance is approved only after the verifier kept one version (or merged)."""
    if DoubleAnnotation.objects.filter(instance_id=instance.pk).exclude(state=DoubleAnnotation.State.DECIDED).exists():
        raise InvalidInput("Two versions of this instance are in: keep one (or merge) before approving.")


def not_own_work(*, instance: Instance, actor: AbstractBaseUser | None, details: dict[str, Any]) -> None:
    """Round two is not done by anyone whose work is in the kept version (`own_work_q`, the queue's rule too)."""
    if actor is not None and Instance.objects.filter(pk=instance.pk).filter(own_work_q(actor)).exists():
        raise NotPermitted(
            "Nobody reviews their own work: your version is in this instance, so round two is for another annotator."
        )


def awaiting_second_q() -> Q:
    """Instances held back from round one (their second version is not in): for the round-one pile."""
    return Q(double_annotation__state__in=OPEN_STATES)


def own_work_q(user: AbstractBaseUser) -> Q:
    """Instances whose kept version holds this user's work, so they may not review them in round two: the author's
    unless the second version was kept; the second annotator's unless the first was kept (merged: both's)."""
    return (Q(author_id=user.pk) & ~Q(double_annotation__decision=DoubleAnnotation.Decision.KEPT_SECOND)) | (
        Q(double_annotation__second_annotator_id=user.pk)
        & ~Q(double_annotation__decision=DoubleAnnotation.Decision.KEPT_FIRST)
    )


def second_annotator_q(user: AbstractBaseUser) -> Q:
    """Instances whose second version this user refined: kept out of their round-one pile (both versions are
    theirs to be judged)."""
    return Q(double_annotation__second_annotator_id=user.pk)

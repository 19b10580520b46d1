"""Hidden gold in the workspace: a probe is worked on like a draft — its page and API routes are an instance's, under
a number taken from the instances' sequence (`annotate.quality.services.number_reserve`); its autosaved fields live
on the probe; submitting checks the same completeness rule as a draft's and scores the answer with the exam's EM;
skipping gives it back with a reason. Nothing here touches an instance, and the gold answer is never read."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from annotate.quality.models import GoldProbe
from annotate.quality.services import probe_submit
from annotate.work import workspace
from annotate.work.workspace import submission_problems
from curation.errors import Conflict, InvalidInput
from curation.models import Instance
from curation.services.instances import fields_clean
from curation.states import Status

PROBE_FIELDS = (
    "question",
    "rationale",
    "answer",
    "answer_form",
    "answer_source",
    "answer_type",
    "scale",
    "reasoning_type_id",
    "is_answerable",
    "unanswerable_reason",
    "relevant_table_ids",
    "excluded_table_ids",
    "excluded_paragraph_ids",
)


def numbered_probe(*, user: AbstractBaseUser, number: int) -> GoldProbe | None:
    """The annotator's probe worked on as instance #number, open or closed, or None (then it is an instance's)."""
    if not user.is_authenticated:
        return None
    return (
        GoldProbe.objects.select_related("project", "gold", "gold__context", "gold__reasoning_type")
        .filter(number=number, user_id=user.pk)
        .first()
    )


def held_probe(*, user: AbstractBaseUser, number: int) -> GoldProbe | None:
    """The open probe the annotator works on as instance #number, or None (then it is an instance's number)."""
    probe = numbered_probe(user=user, number=number)
    return probe if probe is not None and probe.submitted_at is None else None


def own_probes(*, project_id: int, user: AbstractBaseUser) -> QuerySet[GoldProbe]:
    """The annotator's probes in a project, for their queue page (listed as the drafts they look like)."""
    return GoldProbe.objects.filter(project_id=project_id, user_id=user.pk)


def probe_instance(probe: GoldProbe, *, shown_status: str = "") -> Instance:
    """The probe as the workspace shows an instance: unsaved, numbered, in refinement, holding the gold question and
    context with the annotator's autosaved fields — never the gold answer, rationale or marks."""
    fields = probe.fields or {}
    gold = probe.gold
    instance = Instance(
        pk=probe.number,
        project=probe.project,
        context=gold.context,
        reasoning_type_id=fields.get("reasoning_type_id", gold.reasoning_type_id),
        question=fields.get("question", gold.question),
        rationale=fields.get("rationale", ""),
        answer=list(fields.get("answer", [])),
        answer_form=fields.get("answer_form", ""),
        answer_source=fields.get("answer_source", ""),
        answer_type=fields.get("answer_type", ""),
        scale=fields.get("scale", ""),
        is_answerable=fields.get("is_answerable", True),
        unanswerable_reason=fields.get("unanswerable_reason", ""),
        status=shown_status or (Status.SUBMITTED if probe.submitted_at else Status.IN_REFINEMENT),
        version=probe.version,
        author_id=probe.user_id,
        draft={"question": gold.question, "rationale": "", "answer": []},
        created_at=probe.served_at,
        updated_at=probe.served_at,
    )
    instance.marked = {  # read by annotate.work.workspace instead of the instance's relations
        "relevant": set(fields.get("relevant_table_ids", [])),
        "excluded": set(fields.get("excluded_table_ids", [])),
        "excluded_paragraphs": set(fields.get("excluded_paragraph_ids", [])),
    }
    return instance


@transaction.atomic
def probe_autosave(*, probe: GoldProbe, user: AbstractBaseUser, expected_version: int, fields: dict) -> GoldProbe:
    """Save the annotator's work on a probe, checked by the instances' edit rule; a stale version is a Conflict."""
    if expected_version != probe.version:
        raise Conflict(
            "This instance was changed elsewhere; reload it (your text is kept) and apply your edit again.",
            detail={"version": probe.version},
        )
    cleaned = fields_clean({k: v for k, v in fields.items() if k != "note"}, probe_instance(probe))
    saved = {**(probe.fields or {}), **{k: v for k, v in cleaned.items() if k in PROBE_FIELDS}}
    changed = GoldProbe.objects.filter(pk=probe.pk, version=expected_version, submitted_at=None).update(
        fields=saved, version=F("version") + 1
    )
    if changed != 1:
        raise Conflict("This instance was changed elsewhere; reload it and apply your edit again.")
    probe.refresh_from_db()
    return probe


@transaction.atomic
def probe_workspace_submit(
    *, probe: GoldProbe, user: AbstractBaseUser, expected_version: int, fields: dict | None = None
) -> GoldProbe:
    """Submit a probe from the workspace: the same completeness rule as a draft's, then the exam's EM."""
    if fields:
        probe = probe_autosave(probe=probe, user=user, expected_version=expected_version, fields=fields)
    elif expected_version != probe.version:
        raise Conflict(
            "This instance was changed elsewhere; reload it and try again.", detail={"version": probe.version}
        )
    problems = submission_problems(probe_instance(probe))
    if problems:
        raise InvalidInput(
            "Not ready to submit: " + " ".join(p["message"] for p in problems), detail={"problems": problems}
        )
    saved = probe.fields or {}
    is_abstention = not saved.get("is_answerable", True)
    return probe_submit(
        probe_id=probe.pk,
        user=user,
        answer=[] if is_abstention else list(saved.get("answer", [])),
        rationale=saved.get("rationale", ""),
        is_abstention=is_abstention,
    )


@transaction.atomic
def probe_skip(*, probe: GoldProbe, user: AbstractBaseUser, reason: str) -> GoldProbe:
    """Give a probe back with a reason, as a draft is skipped: it closes unscored (no EM, so no figure counts it)."""
    reason = reason.strip()
    if not reason:
        raise InvalidInput("Say why you skip this instance (it helps whoever takes it next).")
    changed = GoldProbe.objects.filter(pk=probe.pk, submitted_at=None).update(
        submitted_at=timezone.now(), skip_reason=reason[:500]
    )
    if changed != 1:
        raise Conflict("This item was submitted already.")
    probe.refresh_from_db()
    return probe


# --- the workspace's writes, for whichever the annotator holds as #number: an instance or a probe ---------------


def held_autosave(
    *, instance_id: int, user: AbstractBaseUser, expected_version: int, fields: dict, note: str = ""
) -> Instance:
    """Autosave what the annotator holds as #instance_id; returns it as the workspace shows it."""
    probe = held_probe(user=user, number=instance_id)
    if probe is None:
        return workspace.workspace_autosave(
            instance_id=instance_id, user=user, expected_version=expected_version, fields=fields, note=note
        )
    return probe_instance(probe_autosave(probe=probe, user=user, expected_version=expected_version, fields=fields))


def held_submit(
    *, instance_id: int, user: AbstractBaseUser, expected_version: int, fields: dict | None = None
) -> Instance:
    """Submit what the annotator holds as #instance_id (a probe is scored and closed, never reviewed)."""
    probe = held_probe(user=user, number=instance_id)
    if probe is None:
        return workspace.workspace_submit(
            instance_id=instance_id, user=user, expected_version=expected_version, fields=fields
        )
    return probe_instance(
        probe_workspace_submit(probe=probe, user=user, expected_version=expected_version, fields=fields)
    )


def held_skip(*, instance_id: int, user: AbstractBaseUser, reason: str) -> Instance:
    """Give back what the annotator holds as #instance_id, with a reason."""
    probe = held_probe(user=user, number=instance_id)
    if probe is None:
        return workspace.workspace_skip(instance_id=instance_id, user=user, reason=reason)
    # As a skipped draft reads: back in the queue.
    return probe_instance(probe_skip(probe=probe, user=user, reason=reason), shown_status=Status.DRAFTED)

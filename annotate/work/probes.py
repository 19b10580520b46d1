"""Hidden gold in the workspace: a probe is worked on like a draft — its page and API routes are an instance's, under
a number taken from the instances' sequence (`annotate.quality.services.number_reserve`); its autosaved fields live
on the probe; submitting checks the same completeness rule as a draft's and scores the answer with the exam's EM;
skipping gives it back with a reason. Nothing here touches an instance; a probe opens as its gold was drafted, and
the refined gold answer is never read."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from annotate.quality.models import GoldProbe
from annotate.quality.services import probe_submit
from annotate.work import workspace
from annotate.work.queue import lease_deadline
from annotate.work.workspace import submission_problems
from curation.errors import Conflict, InvalidInput, NotPermitted
from curation.models import Batch, Instance, InstanceRevision, TransitionEvent
from curation.services.instances import fields_clean
from curation.stand_ins import StandIn
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
    """The open probe the annotator works on as instance #number, or None (then it is an instance's number, or a
    probe given back: gone from their work as a skipped draft is). One handed in is refused as a submitted draft is."""
    probe = numbered_probe(user=user, number=number)
    if probe is None or probe.skip_reason:
        return None
    if probe.submitted_at is not None:
        raise NotPermitted("This instance is submitted: it is not in your hands now.")
    return probe


def own_probes(*, project_id: int, user: AbstractBaseUser) -> QuerySet[GoldProbe]:
    """The annotator's probes in a project, for their queue page (listed as the drafts they look like)."""
    return GoldProbe.objects.filter(project_id=project_id, user_id=user.pk)


def drafted_fields(gold: Instance) -> dict:
    """What a probe opens with, as a real draft of that context would: the gold instance's draft as produced (its
    `draft` record, before anyone refined it) — rationale, answer, answer form/source/type, scale and answerability as
    the drafter gave them, and the tables it marked relevant. Gold without a drafted answer (imported validated data,
    written from scratch) opens as an imported draft does: the question only, rationale and answer empty.

    The question is the validated one (the gold answer scores an answer to that question, so a probe must ask it).
    The refined gold answer and rationale are never read here: the answer served is the draft's own, which equals the
    gold answer only where the draft already said it — then it is what the drafter wrote, not a leak of the gold."""
    draft = gold.draft if isinstance(gold.draft, dict) else {}
    answer = draft.get("answer")
    drafted = {
        "question": gold.question,
        "rationale": str(draft.get("rationale") or ""),
        "answer": [str(item) for item in answer] if isinstance(answer, list) else [],
    }
    for name in ("answer_form", "answer_source", "answer_type", "scale", "unanswerable_reason"):
        drafted[name] = str(draft.get(name) or "")
    drafted["is_answerable"] = draft.get("is_answerable") is not False
    tables = draft.get("relevant_table_ids")
    drafted["relevant_table_ids"] = (
        [int(pk) for pk in tables if isinstance(pk, int)] if isinstance(tables, list) else []
    )
    return drafted


def _draft_record(gold: Instance) -> dict:
    """The gold's draft record as a real draft's reads; a drafted question is the one asked (see `drafted_fields`)."""
    draft = dict(gold.draft) if isinstance(gold.draft, dict) else {}
    if "question" in draft:
        draft["question"] = gold.question
    return draft


def _shown_batch_id(probe: GoldProbe) -> int | None:
    """A batch for the probe to sit in, as every claimed draft does: the project's open one it was served from (its
    first open batch), else its latest — never the gold's own, an old batch that would tell the item apart."""
    batches = Batch.objects.filter(project_id=probe.project_id)
    return (
        batches.filter(state=Batch.State.OPEN).order_by("pk").values_list("pk", flat=True).first()
        or batches.order_by("-pk").values_list("pk", flat=True).first()
    )


_SHOWN_BATCH = object()  # `probe_instance` finds the batch itself


def probe_instance(probe: GoldProbe, *, shown_status: str = "", batch_id: Any = _SHOWN_BATCH) -> Instance:
    """The probe as the workspace shows an instance: unsaved, numbered, in refinement, holding the gold question and
    context, prefilled as a real draft (`drafted_fields`), with the annotator's autosaved fields over it — never the
    refined gold answer, rationale or marks. Held, it has a lease and a batch as a claimed draft has."""
    gold = probe.gold
    fields = {**drafted_fields(gold), **(probe.fields or {})}
    instance = Instance(
        pk=probe.number,
        project=probe.project,
        batch_id=_shown_batch_id(probe) if batch_id is _SHOWN_BATCH else batch_id,
        context=gold.context,
        reasoning_type_id=fields.get("reasoning_type_id", gold.reasoning_type_id),
        question=fields["question"],
        rationale=fields["rationale"],
        answer=list(fields["answer"]),
        answer_form=fields["answer_form"],
        answer_source=fields["answer_source"],
        answer_type=fields["answer_type"],
        scale=fields["scale"],
        is_answerable=fields["is_answerable"],
        unanswerable_reason=fields["unanswerable_reason"],
        status=shown_status or (Status.SUBMITTED if probe.submitted_at else Status.IN_REFINEMENT),
        version=probe.version,
        author_id=probe.user_id,
        lease_expires_at=lease_deadline() if probe.submitted_at is None and not shown_status else None,
        # The draft record as a real draft's reads; its question is the one asked (see `drafted_fields`).
        draft=_draft_record(gold),
        created_at=probe.served_at,
        updated_at=probe.submitted_at or probe.served_at,
    )
    instance.marked = {  # read by annotate.work.workspace instead of the instance's relations
        "relevant": set(fields.get("relevant_table_ids", [])),
        "excluded": set(fields.get("excluded_table_ids", [])),
        "excluded_paragraphs": set(fields.get("excluded_paragraph_ids", [])),
    }
    return instance


def probe_stand_ins(*, user: AbstractBaseUser, project_id: int | None = None) -> list[Instance]:
    """The annotator's probes (those not given back) as the instances they look like, for the lists of the instances
    they may see (curation.stand_ins): a handed-in probe is listed as a handed-in draft is."""
    probes = GoldProbe.objects.select_related("project", "gold__context", "gold__reasoning_type").filter(
        user_id=user.pk, skip_reason="", number__isnull=False
    )
    if project_id is not None:
        probes = probes.filter(project_id=project_id)
    batches: dict[int, int | None] = {}
    shown = []
    for probe in probes:
        if probe.project_id not in batches:
            batches[probe.project_id] = _shown_batch_id(probe)
        shown.append(probe_instance(probe, batch_id=batches[probe.project_id]))
    return shown


def _revision_fields(instance: Instance) -> dict:
    """The editable fields as an instance's revision stores them."""
    marked = instance.marked
    return {
        **{name: getattr(instance, name) for name in PROBE_FIELDS if not name.endswith("_ids")},
        "relevant_table_ids": sorted(marked["relevant"]),
        "excluded_table_ids": sorted(marked["excluded"]),
        "excluded_paragraph_ids": sorted(marked["excluded_paragraphs"]),
    }


def probe_stand_in(*, user: AbstractBaseUser, number: int) -> StandIn | None:
    """The annotator's probe numbered #number as every read of one instance shows it (curation.stand_ins), or None.

    Its timeline is a claimed draft's — drafted, claimed from the queue, submitted by the annotator — and its
    revisions are its autosaved and handed-in fields; a probe given back is gone from the annotator's work, as a
    skipped draft is. Nothing of the gold beyond what `probe_instance` shows is read."""
    probe = numbered_probe(user=user, number=number)
    if probe is None or probe.skip_reason:
        return None
    instance = probe_instance(probe)
    stand_in = StandIn(instance=instance)
    claimed_version = 2  # a draft is drafted at version 1 and claimed at 2 (`probe_serve` starts probes there)

    def event(from_status: str, to_status: str, version: int, reason: str, actor, at) -> TransitionEvent:
        return TransitionEvent(
            instance=instance,
            actor=actor,
            from_status=from_status,
            to_status=to_status,
            version=version,
            reason=reason,
            created_at=at,
        )

    stand_in.events = [
        event("", Status.DRAFTED, 1, "", None, probe.served_at),
        event(Status.DRAFTED, Status.IN_REFINEMENT, claimed_version, "claimed from the queue", user, probe.served_at),
    ]
    # Every save moved the version on by one and left a revision, as a draft's autosaves do; the fields of each are
    # the last saved (a probe keeps no earlier ones).
    is_submitted = probe.submitted_at is not None
    saves = max(probe.version - claimed_version - int(is_submitted), 0)
    kinds = ["autosave"] * saves + (["submit"] if is_submitted else [])
    fields = _revision_fields(instance)
    stand_in.revisions = [
        InstanceRevision(instance=instance, number=n, author=user, kind=kind, fields=fields)
        for n, kind in enumerate(kinds, start=1)
    ]
    if is_submitted:
        submitted = (Status.IN_REFINEMENT, Status.SUBMITTED, probe.version, "submitted by the annotator")
        stand_in.events.append(event(*submitted, user, probe.submitted_at))
    for revision in stand_in.revisions:
        revision.created_at = probe.submitted_at if revision.kind == "submit" else probe.served_at
    return stand_in


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
    shown = probe_instance(probe)  # the draft's prefill with the annotator's edits over it, as they submit it
    is_abstention = not shown.is_answerable
    return probe_submit(
        probe_id=probe.pk,
        user=user,
        answer=[] if is_abstention else list(shown.answer),
        rationale=shown.rationale,
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

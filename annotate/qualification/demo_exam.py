"""A small qualification exam for the demo project: gold questions over the demo paper, and default guidelines."""

from __future__ import annotations

import json
from pathlib import Path

from django.db import transaction

from annotate.qualification.guidelines import guidelines_ensure_default
from annotate.qualification.models import QualificationSettings
from curation.answer_types import suggest_answer_type
from curation.batches.services import batch_create
from curation.models import Context, Project, ReasoningType
from curation.services.lifecycle import instance_create
from curation.states import Status

# The gold pool, one row an item: (table label of the context, reasoning subtype, question, rationale, answer, answer
# source). An attempt takes the first DEMO_EXAM_SIZE; retries draw from the rest, so a failed candidate meets new
# questions.
DEMO_GOLD = json.loads(Path(__file__).with_name("demo_exam.json").read_text(encoding="utf-8"))
# Each attempt draws this many of the gold items above (a third of them), in the exam's order.
DEMO_EXAM_SIZE = 5
# Hours before a failed candidate may try again: long enough that the feedback cannot simply be copied back.
DEMO_RETRY_DELAY_HOURS = 1


@transaction.atomic
def demo_exam_seed(*, project: Project) -> QualificationSettings | None:
    """Create the demo's gold pool (3× the exam) and exam once (no-op with an exam already or without the paper)."""
    guidelines_ensure_default(project=project)
    existing = QualificationSettings.objects.filter(project=project).first()
    if existing is not None and existing.item_links.exists():
        return existing
    contexts: dict[str, Context] = {}
    for context in Context.objects.filter(project=project, kind=Context.Kind.SHORT).prefetch_related("tables"):
        for table in context.tables.all():
            contexts.setdefault(table.label, context)
    if not all(label in contexts for label, *_ in DEMO_GOLD):
        return None
    types = {t.code: t for t in ReasoningType.objects.filter(project=project)}
    # In a batch of their own, so a first release can be cut from the demo (releases freeze batches).
    batch = batch_create(project=project, actor=None, name="Validated demo items")
    gold = [
        instance_create(
            project_id=project.pk,
            actor=None,
            initial_status=Status.VALIDATED,
            reason="demo qualification item",
            batch=batch,
            context=contexts[label],
            reasoning_type=types.get(code),
            question=question,
            rationale=rationale,
            answer=answer,
            answer_form="short",
            answer_source=source,
            # The answer type (span, multi-span, arithmetic) by the rule drafts and the workspace use; the scale is
            # None (""), chosen: these answers carry their unit in the question, and the exam compares the text.
            answer_type=suggest_answer_type(question=question, rationale=rationale, answer=answer).value or "",
            scale="",
            relevant_tables=[t for t in contexts[label].tables.all() if t.label == label] if source != "text" else [],
            external_uid=f"demo-exam-{index}",
        )
        for index, (label, code, question, rationale, answer, source) in enumerate(DEMO_GOLD)
    ]
    exam, _ = QualificationSettings.objects.get_or_create(project=project)
    exam.size = DEMO_EXAM_SIZE
    exam.retry_delay_hours = DEMO_RETRY_DELAY_HOURS
    exam.save()
    exam.item_links.all().delete()
    exam.item_links.bulk_create(
        exam.item_links.model(settings=exam, instance=instance, order=order) for order, instance in enumerate(gold)
    )
    return exam

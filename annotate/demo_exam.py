"""A small qualification exam for the demo project: gold questions over the demo paper, and default guidelines."""

from __future__ import annotations

from django.db import transaction

from annotate.models import QualificationSettings
from annotate.services.guidelines import guidelines_ensure_default
from curation.models import Context, Project, ReasoningType
from curation.services.batches import batch_create
from curation.services.lifecycle import instance_create
from curation.states import Status

# (table label of the context, reasoning subtype, question, rationale, answer, answer source)
DEMO_GOLD = [
    (
        "tab:main",
        "span_lookup",
        "How many parameters, in millions, does LoRA train?",
        "Table 1 lists 8.1M parameters for LoRA.",
        ["8.1"],
        "table",
    ),
    (
        "tab:main",
        "comparison",
        "On which treebank does LoRA reach its lowest LAS?",
        "LoRA: Wolof 76.2, Faroese 78.8, Tagalog 71.0, Yoruba 67.7; the lowest is Yoruba.",
        ["Yoruba"],
        "table",
    ),
    (
        "tab:main",
        "comparison",
        "Which methods have an average LAS below 74.5?",
        "Averages: full fine-tuning 74.9, adapters 74.3, LoRA 73.4, sparse adapters 76.0; below 74.5: adapters, LoRA.",
        ["Adapters", "LoRA"],
        "table",
    ),
    (
        "tab:ablation",
        "arithmetic_calculation",
        "How many minutes per epoch does 90% sparsity save over 50% sparsity on Wolof?",
        "Time per epoch: 14.0 min at 50%, 9.8 min at 90%; 14.0 - 9.8 = 4.2.",
        ["4.2"],
        "table",
    ),
    (
        "tab:ablation",
        "span_lookup",
        "What sparsity level do the authors use in all other experiments?",
        "The paragraph says 90% is used in all other experiments.",
        ["90%"],
        "text",
    ),
]


@transaction.atomic
def demo_exam_seed(*, project: Project) -> QualificationSettings | None:
    """Create the demo's gold instances and exam once (no-op when the project has an exam or lacks the demo paper)."""
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
            relevant_tables=[t for t in contexts[label].tables.all() if t.label == label] if source != "text" else [],
            external_uid=f"demo-exam-{index}",
        )
        for index, (label, code, question, rationale, answer, source) in enumerate(DEMO_GOLD)
    ]
    exam, _ = QualificationSettings.objects.get_or_create(project=project)
    exam.size = len(gold)
    exam.retry_delay_hours = 0  # a demo visitor may want to fail once and try again at once
    exam.save()
    exam.item_links.all().delete()
    exam.item_links.bulk_create(
        exam.item_links.model(settings=exam, instance=instance, order=order) for order, instance in enumerate(gold)
    )
    return exam

"""A small qualification exam for the demo project: gold questions over the demo paper, and default guidelines."""

from __future__ import annotations

from django.db import transaction

from annotate.qualification.guidelines import guidelines_ensure_default
from annotate.qualification.models import QualificationSettings
from curation.answer_types import suggest_answer_type
from curation.batches.services import batch_create
from curation.models import Context, Project, ReasoningType
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
    # The rest of the gold pool: retries draw from these, so a failed candidate meets new questions.
    (
        "tab:main",
        "span_lookup",
        "What LAS does full fine-tuning reach on Faroese?",
        "Table 1, full fine-tuning row, Faroese column: 80.1.",
        ["80.1"],
        "table",
    ),
    (
        "tab:main",
        "comparison",
        "Which method trains the most parameters?",
        "Params (M): full fine-tuning 560, adapters 12.4, LoRA 8.1, sparse adapters 3.2; the most is full fine-tuning.",
        ["Full fine-tuning"],
        "table",
    ),
    (
        "tab:main",
        "arithmetic_calculation",
        "By how many LAS points do sparse adapters beat LoRA on Tagalog?",
        "Tagalog: sparse adapters 73.8, LoRA 71.0; 73.8 - 71.0 = 2.8.",
        ["2.8"],
        "table",
    ),
    (
        "tab:main",
        "span_lookup",
        "What is the average LAS of adapters?",
        "Table 1, adapters row, Avg. column: 74.3.",
        ["74.3"],
        "table",
    ),
    (
        "tab:main",
        "comparison",
        "On which treebank does full fine-tuning reach its highest LAS?",
        "Full fine-tuning: Wolof 78.4, Faroese 80.1, Tagalog 71.9, Yoruba 69.2; the highest is Faroese.",
        ["Faroese"],
        "table",
    ),
    (
        "tab:main",
        "arithmetic_calculation",
        "How many million parameters fewer than adapters do sparse adapters train?",
        "Params (M): adapters 12.4, sparse adapters 3.2; 12.4 - 3.2 = 9.2.",
        ["9.2"],
        "table",
    ),
    (
        "tab:ablation",
        "span_lookup",
        "What LAS does 75% sparsity reach on Wolof?",
        "Table 2, 75% row, LAS column: 78.9.",
        ["78.9"],
        "table",
    ),
    (
        "tab:ablation",
        "comparison",
        "Which sparsity level has the shortest training time per epoch?",
        "Time (min): 50% 14.0, 75% 11.5, 90% 9.8, 95% 9.1; the shortest is 95%.",
        ["95%"],
        "table",
    ),
    (
        "tab:ablation",
        "arithmetic_calculation",
        "How many LAS points does 95% sparsity lose against 90% sparsity on Wolof?",
        "LAS: 90% 79.1, 95% 77.6; 79.1 - 77.6 = 1.5.",
        ["1.5"],
        "table",
    ),
    (
        "tab:ablation",
        "span_lookup",
        "On which treebank is the sparsity ablation run?",
        "The caption and the paragraph say the ablation varies the sparsity level on Wolof.",
        ["Wolof"],
        "text",
    ),
]
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
            # left empty: these answers carry their unit in the question, and the exam compares the text.
            answer_type=suggest_answer_type(question=question, rationale=rationale, answer=answer).value or "",
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

"""Test shorthand for hidden gold: an annotator working until a probe comes, and answering it as a draft."""

from __future__ import annotations

import json

from annotate.quality.models import GoldProbe
from annotate.quality.services import quality_configure
from annotate.work.queue import queue_claim
from annotate.work.workspace import workspace_autosave, workspace_submit
from curation.models import Instance
from tests.annotate.qualification.support import GOLD
from tests.factories import ValidatedInstanceFactory


def refine_and_submit(instance: Instance, user, answer: list[str] | None = None) -> Instance:
    """Fill in what submission needs and submit (as the workspace does); a probe is submitted as a draft is."""
    saved = workspace_autosave(
        instance_id=instance.pk,
        user=user,
        expected_version=instance.version,
        fields={
            **({} if instance.question else {"question": "Which model wins?"}),
            "answer": ["A"] if answer is None else answer,
            "answer_form": "short",
            "answer_source": "table",
            "answer_type": "span",
            "scale": "",
            "relevant_table_ids": list(instance.context.tables.values_list("id", flat=True)),
        },
    )
    return workspace_submit(instance_id=saved.pk, user=user, expected_version=saved.version)


def work_until_probe(*, project, user, limit: int = 12) -> GoldProbe:
    """Take "Next" and submit drafts until the queue serves a hidden gold probe; fail when it never does."""
    for _ in range(limit):
        claim = queue_claim(project_slug=project.slug, user=user)
        assert claim is not None, "the queue ran dry before serving hidden gold"
        probe = GoldProbe.objects.filter(instance_id=claim.instance_id).select_related("instance", "gold").first()
        if probe is not None:
            return probe
        refine_and_submit(Instance.objects.get(pk=claim.instance_id), user)
    raise AssertionError(f"no hidden gold in {limit} claims")


def submit_probe(probe: GoldProbe, user, answer: list[str]) -> GoldProbe:
    """Answer a held probe in the workspace, as any draft is answered; the probe's mark, scored."""
    refine_and_submit(Instance.objects.get(pk=probe.instance_id), user, answer=answer)
    return GoldProbe.objects.get(pk=probe.pk)


def gold_on(project, manager, drafts: list | None = None, **values) -> None:
    """Switch hidden gold on (1 in 2 unless told). Switched on after `drafts` were made, the unclaimed ones get new
    ids among the probes: the list is brought up to date in place (each draft found again by its draft record)."""
    quality_configure(project=project, actor=manager, **{"gold_every": 2, **values})
    if drafts:
        now = Instance.objects.filter(batch_id__in={d.batch_id for d in drafts}).without_probes()
        by_record = {json.dumps(i.draft, sort_keys=True): i for i in now}
        drafts[:] = [by_record.get(json.dumps(d.draft, sort_keys=True), d) for d in drafts]


# The drafts the gold of `make_refined_gold` was refined from: their answers and rationales are not the gold's, so
# a probe may show them (they are what the drafter said) while the refined gold answer stays hidden.
DRAFTED = [
    (["Draftwort-one"], "Draft-rationale Pebbleshade one."),
    (["Draftwort-two"], "Draft-rationale Pebbleshade two."),
    (["Draftwort-three"], "Draft-rationale Pebbleshade three."),
    (["Draftwort-four"], "Draft-rationale Pebbleshade four."),
]


def make_refined_gold(project, context, *, variant: str = "") -> list:
    """The GOLD instances as drafted by a drafter whose answers an annotator then corrected (draft ≠ gold); a
    `variant` (" in the appendix") asks each question of another place, for four more gold items."""
    table_ids = sorted(context.tables.values_list("id", flat=True))
    return [
        ValidatedInstanceFactory(
            project=project,
            context=context,
            question=question.replace("?", f"{variant}?"),
            answer=answer,
            rationale=rationale,
            answer_type="span",
            draft={
                "drafter": "llm",
                "question": question.replace("?", f"{variant} exactly?"),
                "answer": drafted_answer,
                "rationale": drafted_rationale,
                "answer_type": "arithmetic",
                "scale": "percent",
                "relevant_table_ids": table_ids,
            },
            reason="refined gold for tests",
        )
        for (question, answer, rationale), (drafted_answer, drafted_rationale) in zip(GOLD, DRAFTED, strict=True)
    ]

"""Test shorthand for hidden gold: a project with gold and drafts, and an annotator working until a probe comes."""

from __future__ import annotations

from annotate.quality.models import GoldProbe
from annotate.quality.services import quality_configure
from annotate.work.queue import queue_claim
from annotate.work.workspace import workspace_autosave, workspace_submit
from curation.models import Instance


def refine_and_submit(instance: Instance, user) -> Instance:
    """Fill in what submission needs and submit (as the workspace does)."""
    saved = workspace_autosave(
        instance_id=instance.pk,
        user=user,
        expected_version=instance.version,
        fields={
            "question": "Which model wins?",
            "answer": ["A"],
            "answer_form": "short",
            "answer_source": "table",
            "answer_type": "span",
            "relevant_table_ids": list(instance.context.tables.values_list("id", flat=True)),
        },
    )
    return workspace_submit(instance_id=saved.pk, user=user, expected_version=saved.version)


def work_until_probe(*, project, user, limit: int = 12) -> GoldProbe:
    """Take "Next" and submit drafts until the queue serves a hidden gold probe; fail when it never does."""
    for _ in range(limit):
        claim = queue_claim(project_slug=project.slug, user=user)
        assert claim is not None, "the queue ran dry before serving hidden gold"
        if claim.probe_id is not None:
            return GoldProbe.objects.get(pk=claim.probe_id)
        refine_and_submit(Instance.objects.get(pk=claim.instance_id), user)
    raise AssertionError(f"no hidden gold in {limit} claims")


def gold_on(project, manager, **values) -> None:
    quality_configure(project=project, actor=manager, **{"gold_every": 2, **values})

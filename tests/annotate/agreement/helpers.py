"""Test shorthand for double annotation: switch it on, refine and submit an instance or a copy, decide round one."""

from __future__ import annotations

from annotate.agreement.models import DoubleAnnotation
from annotate.agreement.services import agreement_configure, copy_submit, double_decide
from annotate.review.services import review_approve, review_next
from annotate.work.queue import queue_claim
from annotate.work.workspace import workspace_autosave, workspace_submit
from curation.models import Instance
from curation.states import Status

FIRST = {
    "question": "Which model is the most accurate one?",
    "rationale": "Table 1 gives A 87.3 and B 81.0.",
    "answer": ["A"],
    "answer_form": "short",
    "answer_source": "table",
    "answer_type": "span",
    "scale": "",
}


def double_on(project, manager, *, fraction: float = 1.0, seed: int = 0) -> None:
    agreement_configure(project=project, actor=manager, double_fraction=fraction, seed=seed)


def submit_instance(instance: Instance, user, **fields) -> Instance:
    """Refine as the workspace does (every field submission needs) and submit."""
    values = {**FIRST, "relevant_table_ids": list(instance.context.tables.values_list("id", flat=True)), **fields}
    saved = workspace_autosave(instance_id=instance.pk, user=user, expected_version=instance.version, fields=values)
    return workspace_submit(instance_id=saved.pk, user=user, expected_version=saved.version)


def first_submission(*, project, user, **fields) -> tuple[Instance, DoubleAnnotation]:
    """The user takes Next (a fresh draft) and submits it; with double annotation at 1.0 it opens a copy."""
    claim = queue_claim(project_slug=project.slug, user=user)
    assert claim is not None and claim.copy_id is None, claim
    instance = submit_instance(Instance.objects.get(pk=claim.instance_id), user, **fields)
    return instance, DoubleAnnotation.objects.get(instance=instance)


def second_submission(*, project, user, **fields) -> DoubleAnnotation:
    """The user takes Next, which must serve a copy, and hands it in complete."""
    claim = queue_claim(project_slug=project.slug, user=user)
    assert claim is not None and claim.copy_id is not None, claim
    copy = DoubleAnnotation.objects.get(pk=claim.copy_id)
    values = {
        **FIRST,
        "relevant_table_ids": list(copy.instance.context.tables.values_list("id", flat=True)),
        **fields,
    }
    return copy_submit(copy_id=copy.pk, user=user, fields=values)


def approved_pair(personas, project, choices) -> Instance:
    """The pair of annotator and annotator2, decided with `choices` and approved into round two."""
    double_on(project, personas["manager"])
    instance, _ = first_submission(project=project, user=personas["annotator"])
    second_submission(project=project, user=personas["annotator2"])
    held = review_next(project=project, user=personas["verifier"])
    double_decide(instance_id=held.pk, user=personas["verifier"], expected_version=held.version, choices=choices)
    held.refresh_from_db()
    review_approve(instance_id=held.pk, user=personas["verifier"], expected_version=held.version)
    instance.refresh_from_db()
    assert instance.status == Status.ROUND2_REVIEW
    return instance

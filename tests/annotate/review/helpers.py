"""Helpers for the review tests: drive an instance along the lifecycle with the real services."""

from __future__ import annotations

from annotate.review import services as review
from annotate.work.workspace import workspace_submit
from curation.models import Instance
from tests.annotate.work.helpers import queue_next

COMPLETE = {
    "question": "Which model is more accurate?",
    "rationale": "Table 1: A has 87.3, B has 81.0.",
    "answer": ["A"],
    "answer_form": "short",
    "answer_source": "table",
    "answer_type": "span",
    "scale": "",
}


def submit(project, annotator, instance: Instance | None = None, **fields) -> Instance:
    """The annotator claims (or resumes) an instance and submits it complete."""
    claimed = queue_next(project=project, user=annotator)
    assert claimed is not None and (instance is None or claimed.pk == instance.pk)
    table_ids = list(claimed.context.tables.values_list("id", flat=True)) if claimed.context_id else []
    body = {**COMPLETE, "relevant_table_ids": table_ids, **fields}
    return workspace_submit(instance_id=claimed.pk, user=annotator, expected_version=claimed.version, fields=body)


def sent_back(project, people, comment: dict, instance: Instance | None = None, **fields) -> Instance:
    """Submitted by `annotator` (with `fields`), sent back by `verifier` with `comment`: changes requested."""
    submitted = submit(project, people["annotator"], instance, **fields)
    claimed = review.review_claim(instance_id=submitted.pk, user=people["verifier"])
    return review.review_request_changes(
        instance_id=claimed.pk, user=people["verifier"], expected_version=claimed.version, comments=[comment]
    )


def to_round2(project, people, instance: Instance | None = None) -> Instance:
    """Submitted by `annotator`, approved by `verifier`."""
    submitted = submit(project, people["annotator"], instance)
    claimed = review.review_claim(instance_id=submitted.pk, user=people["verifier"])
    return review.review_approve(instance_id=claimed.pk, user=people["verifier"], expected_version=claimed.version)


def to_discussion(project, people, instance: Instance | None = None):
    """…and flagged in round two by `annotator2`: returns the discussion."""
    approved = to_round2(project, people, instance)
    claimed = review.round2_claim(instance_id=approved.pk, user=people["annotator2"])
    return review.round2_flag(
        instance_id=claimed.pk,
        user=people["annotator2"],
        expected_version=claimed.version,
        comments=[{"field": "answer", "text": "The answer should name both models."}],
    )

"""Unanswerable questions end to end: submitted with a reason (one guard for every door), seen in both review rounds,
frozen into the `unanswerable` split, and scored as an abstention apart from the answerable questions."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from annotate.review import services as review
from annotate.work.workspace import submission_problems, workspace_submit
from curation.errors import InvalidInput
from curation.exports.records import scitat_record
from curation.models import Instance
from curation.releases.services.cut import UNANSWERABLE_SPLIT, release_cut
from curation.toolkit.extraction import ABSTENTION_ANSWER, extract_answer, is_abstention
from scoring.runs.results import item_metrics, run_summary
from scoring.runs.uploads import upload_run_create
from tests.annotate.review.helpers import COMPLETE
from tests.annotate.work.helpers import queue_next
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

NOT_ANSWERABLE = {
    "question": "What accuracy does model C reach?",
    "rationale": "",
    "answer": [],
    "is_answerable": False,
    "unanswerable_reason": "Table 1 lists only models A and B; model C is not reported.",
}


def _claim(project, annotator):
    claimed = queue_next(project=project, user=annotator)
    assert claimed is not None
    return claimed


def test_unanswerable_submission_needs_a_reason_and_no_answer(personas, project, drafts, api_client_for):
    claimed = _claim(project, personas["annotator"])
    client = api_client_for(personas["annotator"])
    url = f"/api/instances/{claimed.pk}/submit/"
    no_reason = {**NOT_ANSWERABLE, "unanswerable_reason": "  ", "expected_version": claimed.version}
    response = client.post(url, no_reason, format="json")
    assert response.status_code == 400
    assert "Say why this context cannot answer" in response.content.decode()
    claimed.refresh_from_db()
    assert claimed.status == "in_refinement"
    with_answer = {**NOT_ANSWERABLE, "answer": ["87.3"], "expected_version": claimed.version}
    response = client.post(url, with_answer, format="json")
    assert response.status_code == 400 and "has no answer" in response.content.decode()
    claimed.refresh_from_db()
    # Neither form nor source nor type is asked of a question that has no answer.
    response = client.post(url, {**NOT_ANSWERABLE, "expected_version": claimed.version}, format="json")
    assert response.status_code == 200, response.content[:300]
    body = response.json()
    assert (body["status"], body["is_answerable"]) == ("submitted", False)
    assert body["unanswerable_reason"] == NOT_ANSWERABLE["unanswerable_reason"]
    assert Instance.objects.get(pk=claimed.pk).revisions.last().fields["is_answerable"] is False


def test_an_answerable_question_still_needs_its_answer(personas, project, drafts):
    claimed = _claim(project, personas["annotator"])
    with pytest.raises(InvalidInput, match="Give at least one answer item"):
        workspace_submit(
            instance_id=claimed.pk,
            user=personas["annotator"],
            expected_version=claimed.version,
            fields={**NOT_ANSWERABLE, "is_answerable": True},
        )


def test_is_answerable_must_be_a_boolean(personas, project, drafts, api_client_for):
    claimed = _claim(project, personas["annotator"])
    response = api_client_for(personas["annotator"]).post(
        f"/api/instances/{claimed.pk}/autosave/",
        {"expected_version": claimed.version, "is_answerable": "perhaps"},
        format="json",
    )
    assert response.status_code == 400 and "is_answerable" in response.content.decode()


def _page(username: str, url: str) -> str:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_draft_to_release_to_a_scored_abstention(personas, project, drafts, context):
    """The whole path on the real services: refine as unanswerable, both rounds (each shows it), release, score."""
    unanswerable = _claim(project, personas["annotator"])
    workspace_submit(
        instance_id=unanswerable.pk,
        user=personas["annotator"],
        expected_version=unanswerable.version,
        fields=NOT_ANSWERABLE,
    )
    answerable = _claim(project, personas["annotator"])
    workspace_submit(
        instance_id=answerable.pk,
        user=personas["annotator"],
        expected_version=answerable.version,
        fields={**COMPLETE, "relevant_table_ids": list(context.tables.values_list("id", flat=True))},
    )
    for instance in (unanswerable, answerable):
        claimed = review.review_claim(instance_id=instance.pk, user=personas["verifier"])
        if instance is unanswerable:
            page = _page("verifier", reverse("review", args=[project.slug, instance.pk]))
            assert "Not answerable from this context" in page and "model C is not reported" in page
        approved = review.review_approve(
            instance_id=claimed.pk, user=personas["verifier"], expected_version=claimed.version
        )
        claimed = review.round2_claim(instance_id=approved.pk, user=personas["annotator2"])
        if instance is unanswerable:
            page = _page("annotator2", reverse("round2", args=[project.slug, instance.pk]))
            assert "Not answerable from this context" in page and "model C is not reported" in page
        review.round2_confirm(instance_id=claimed.pk, user=personas["annotator2"], expected_version=claimed.version)

    release = release_cut(
        project=project,
        actor=personas["manager"],
        name="with-unanswerable",
        batch_ids=[drafts[0].batch_id],
        split_seed=3,
    )
    items = {item.instance_id: item for item in release.items.all()}
    frozen = items[unanswerable.pk]
    assert frozen.split == UNANSWERABLE_SPLIT and frozen.data["is_answerable"] is False
    assert frozen.data["answer"] == [] and "model C" in frozen.data["unanswerable_reason"]
    assert items[answerable.pk].split in ("train", "dev", "test")
    assert release.statistics["split"][UNANSWERABLE_SPLIT] == 1, release.statistics["split"]
    record = scitat_record(frozen.data, frozen.short_context.data, None)
    assert (record["split"], record["is_answerable"]) == ("unanswerable", False)

    predictions = [
        {"uid": frozen.uid, "answer": [ABSTENTION_ANSWER]},
        {"uid": items[answerable.pk].uid, "answer": ["A"]},
    ]
    content = "\n".join(json.dumps(p) for p in predictions).encode()
    run = upload_run_create(release=release, actor=None, format="jsonl", name="abstain.jsonl", content=content)
    run.refresh_from_db()
    figures = run.results["answerability"]
    assert figures["unanswerable"] == {"count": 1, "accuracy": 1.0}
    assert figures["answerable"] == {"count": 1, "accuracy": 1.0}
    page = _page("manager", reverse("scoring-run", args=[project.slug, run.pk]))
    assert "Unanswerable (abstained)" in page and "<em>not answerable</em>" in page


UNANSWERABLE_ITEM = {"uid": "u1", "answer": [], "answer_form": "", "is_answerable": False}
ANSWERABLE_ITEM = {"uid": "a1", "answer": ["87.3"], "answer_form": "short"}


def test_an_abstention_is_credited_only_on_unanswerable_questions():
    abstained = item_metrics(UNANSWERABLE_ITEM, answer=["Not answerable"], scale="")
    # Credited, and kept out of EM/F1 (and the short/free-form counts): there is no gold text to match.
    assert (abstained["is_correct"], abstained["em"], abstained["f1"], abstained["short_form"]) == (
        True,
        None,
        None,
        None,
    )
    assert item_metrics(UNANSWERABLE_ITEM, answer=["87.3"], scale="")["is_correct"] is False
    assert item_metrics(UNANSWERABLE_ITEM, answer=[], scale="")["is_correct"] is False
    wrong = item_metrics(ANSWERABLE_ITEM, answer=["Not answerable"], scale="")
    assert (wrong["is_correct"], wrong["abstained"]) == (False, True)
    records = [
        {**item_metrics(UNANSWERABLE_ITEM, answer=["cannot be determined from the context"], scale=""), "uid": "u1"},
        {**item_metrics(UNANSWERABLE_ITEM, answer=["42"], scale=""), "uid": "u2"},
        {**item_metrics(ANSWERABLE_ITEM, answer=["87.3"], scale=""), "uid": "a1"},
        {**wrong, "uid": "a2"},
    ]
    full = run_summary(records, resamples=50)
    assert full["figures"]["em"]["count"] == 2 and full["short_form_count"] == 2  # the answerable questions only
    summary = full["answerability"]
    assert summary == {
        "answerable": {"count": 2, "accuracy": 0.5},
        "unanswerable": {"count": 2, "accuracy": 0.5},
        "abstained_on_answerable": 1,
    }


@pytest.mark.parametrize(
    ("output", "method", "abstains"),
    [
        ("Reason: Table 1 has no row for C. Answer: Not answerable", "cot", True),
        ("The question cannot be answered from the context.", "direct", True),
        ("**Unanswerable**", "direct", True),
        ("Answer: 87.3", "cot", False),
        ("Answer: Not answerable, but A reaches 87.3 and B 81.0 which suggests the gap is 6.3", "cot", False),
    ],
)
def test_extraction_recognises_an_abstention(output, method, abstains):
    assert is_abstention(extract_answer(output, method=method).items) is abstains


def test_the_guard_lists_what_an_unanswerable_draft_lacks(personas, project, drafts):
    claimed = _claim(project, personas["annotator"])
    claimed.is_answerable = False
    fields = {p["field"] for p in submission_problems(claimed)}
    assert fields == {"unanswerable_reason", "answer"}  # the draft still carries its answer "A"

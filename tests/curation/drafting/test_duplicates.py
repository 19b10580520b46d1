"""Drafts that repeat a prompt example or an existing question are rejected, with the reason on the run's page."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from curation.drafting import duplicates, prompts
from curation.drafting.models import DraftingRun
from curation.drafting.services.items import run_process_inline
from curation.drafting.services.runs import run_create
from curation.models import Instance
from curation.services.lifecycle import instance_create
from scoring.metrics import sentence_embedding
from tests.conftest import PASSWORD
from tests.curation.drafting.conftest import endpoint_on
from tests.support.fault_server import Fault, FaultServer, completion_body

EXAMPLES = duplicates.example_questions(prompts.DEFAULT_QUESTION_TEMPLATE)
COPIED = "Which of the two pre-training objectives gives higher recall on the test set?"


def test_the_default_prompt_examples_are_read_from_every_block():
    assert len(EXAMPLES) == 39 and COPIED in EXAMPLES


def test_an_exact_repeat_is_caught_whatever_its_case_and_punctuation():
    found = duplicates.duplicate_of(f"question:  {COPIED.upper()}!!", examples=EXAMPLES, existing=[])
    assert (found.kind, found.measure, found.matched) == ("prompt example", "exact", COPIED)
    assert "word for word" in found.reason


@pytest.mark.skipif(not sentence_embedding.is_available(), reason="the MiniLM package is not installed")
def test_near_duplicates_are_measured_with_the_minilm_embeddings():
    # The scoring app registers the embedder when Django starts.
    assert duplicates.question_embedder_name() == sentence_embedding.NAME
    copy = "By how many BLEU points does back-translation improve the plain transformer on WMT14 En-Fr?"
    found = duplicates.duplicate_of(copy, examples=EXAMPLES, existing=[])
    assert found is not None and found.kind == "prompt example" and found.similarity >= 0.92
    assert found.measure == sentence_embedding.NAME and "near-duplicate" in found.reason
    # A question about the same table that asks something else is kept.
    assert (
        duplicates.duplicate_of("What is the accuracy of model A?", examples=[], existing=["Which model wins?"]) is None
    )
    assert duplicates.duplicate_of("What is the accuracy of Ours on Dev?", examples=EXAMPLES, existing=[]) is None


def _run(project, manager, batch, server):
    run = run_create(
        project=project, actor=manager, kind="llm", batch=batch, endpoint=endpoint_on(project, server.base_url)
    )
    return run_process_inline(run_id=run.pk)


def _replying(question: str):
    def reply(request: dict) -> Fault:
        if request["messages"][-1]["content"].rstrip().endswith("Reason:"):
            return Fault(body=completion_body("Ours has 88.9.\nAnswer: Ours"))
        return Fault(body=completion_body(f"Question: {question}"))

    return reply


@pytest.mark.django_db
def test_a_draft_copying_a_prompt_example_is_rejected_and_shown_on_the_run_page(
    project, personas, drafting_batch, drafting_contexts
):
    with FaultServer(responder=_replying(COPIED)) as server:
        run = _run(project, personas["manager"], drafting_batch, server)
    assert run.status == DraftingRun.Status.COMPLETED
    assert not Instance.objects.filter(project=project).exists()
    item = run.items.first()
    assert item.instance_count == 0 and item.error.startswith("rejected: repeats a prompt example (word for word)")
    assert item.raw_output["rejected"][0]["matched"] == COPIED
    assert "Reason:" not in str(item.raw_output)  # the answer was never asked for
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    page = client.get(reverse("drafting-run", args=[project.slug, run.pk])).content.decode()
    assert "rejected: repeats a prompt example" in page


@pytest.mark.django_db
def test_a_draft_repeating_a_question_of_the_same_paper_is_rejected(
    project, personas, drafting_batch, drafting_contexts
):
    asked = "Which model is best on Dev, Ours or RoBERTa?"
    instance_create(project_id=project.pk, actor=None, context=drafting_contexts[0], question=asked)
    with FaultServer(responder=_replying("which model is best on dev: ours or roberta")) as server:
        run = _run(project, personas["manager"], drafting_batch, server)
    by_context = {item.context_id: item for item in run.items.all()}
    assert by_context[drafting_contexts[0].pk].instance_count == 0
    assert "rejected: repeats an existing question (word for word)" in by_context[drafting_contexts[0].pk].error
    # The other papers have no such question: their drafts are queued.
    assert [by_context[c.pk].instance_count for c in drafting_contexts[1:]] == [1, 1]


def test_without_an_embedder_a_word_sequence_ratio_stands_in(monkeypatch):
    monkeypatch.setattr(duplicates, "_EMBEDDER", {})
    assert duplicates.question_embedder_name() == "lexical"
    copy = "By how many BLEU points does back-translation improve the plain transformer on WMT14 En-Fr?"
    found = duplicates.duplicate_of(copy, examples=EXAMPLES, existing=[])
    assert found is not None and found.measure == "lexical" and found.similarity >= duplicates.NEAR_DUPLICATE_RATIO
    assert duplicates.duplicate_of("What is the accuracy of Ours on Dev?", examples=EXAMPLES, existing=[]) is None

"""Two chunks drafting one paper at once: the commit checks repeats again, so a question is asked of a paper once."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from django.db import connection

from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.services.drafter import Drafter, Outcome
from curation.drafting.services.items import _item_commit
from curation.drafting.services.jobs import DRAFTING_ITEMS
from curation.drafting.services.runs import run_create
from curation.drafting.signals import drafts_committed
from curation.models import Instance
from tests.conftest import postgres_only
from tests.curation.drafting.conftest import endpoint_on, make_contexts

pytestmark = pytest.mark.django_db


def _claimed(run: DraftingRun) -> list[tuple[DraftingItem, str]]:
    """Every item of `run`, claimed as the workers of its chunks would (each by its own token)."""
    items = DraftingItem.objects.select_related("context").filter(run=run).order_by("pk")
    return [(item, DRAFTING_ITEMS.take(item.pk, worker=f"worker-{item.chunk}")) for item in items]


def test_two_chunks_drafting_one_paper_at_once_commit_each_question_once(project, personas, drafting_batch):
    # Two paragraphs of one paper citing its one table, in two chunks: the same seed drafts the same questions.
    contexts = make_contexts(project, drafting_batch, 2, one_paper=True)
    run = run_create(
        project=project, actor=personas["manager"], kind="template", batch=drafting_batch, options={"chunk_size": 1}
    )
    (first, first_token), (second, second_token) = _claimed(run)
    assert first.chunk != second.chunk
    # Both workers draft before either commits: neither sees the other's questions.
    first_outcome = Drafter(run).draft(first.context)
    second_outcome = Drafter(run).draft(second.context)
    questions = [fields["question"] for fields in first_outcome.drafts]
    assert questions and questions == [fields["question"] for fields in second_outcome.drafts]

    _item_commit(run, first, first_token, first_outcome)
    _item_commit(run, second, second_token, second_outcome)

    asked = Counter(Instance.objects.filter(context__paper=contexts[0].paper).values_list("question", flat=True))
    assert asked == Counter(questions)  # each once, none twice
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.instance_count == len(questions) and "dropped" not in first.error
    assert second.status == DraftingItem.Status.DRAFTED and second.instance_count == 0 and second.instance is None
    assert not Instance.objects.filter(context=second.context).exists()
    rejected = [entry for entry in second.raw_output["rejected"] if "asked of the paper" in entry["reason"]]
    assert sorted(entry["question"] for entry in rejected) == sorted(questions)
    assert f"{len(questions)} dropped at commit" in second.error


def test_an_llm_question_committed_meanwhile_rejects_the_same_question_at_commit(project, personas, drafting_batch):
    contexts = make_contexts(project, drafting_batch, 2, one_paper=True)
    endpoint = endpoint_on(project, "http://127.0.0.1:9")  # never asked: the outcomes are built here
    run = run_create(
        project=project,
        actor=personas["manager"],
        kind="llm",
        batch=drafting_batch,
        endpoint=endpoint,
        options={"chunk_size": 1},
    )
    (first, first_token), (second, second_token) = _claimed(run)
    question = "Which model is best on Dev, Ours or RoBERTa?"

    def outcome(context, asked: str) -> Outcome:
        fields = {
            "reasoning_type": context.reasoning_type,
            "question": asked,
            "rationale": "Ours has 88.9 and RoBERTa 87.6.",
            "answer": ["Ours"],
            "relevant_tables": list(context.tables.all()),
            "draft": {"drafter": "llm", "run": run.pk, "context": context.pk},
        }
        return Outcome(drafts=[fields], raw_output={"question": f"Question: {asked}"})

    _item_commit(run, first, first_token, outcome(contexts[0], question))
    _item_commit(run, second, second_token, outcome(contexts[1], f"{question.upper()}!"))

    assert list(Instance.objects.filter(context__paper=contexts[0].paper).values_list("question", flat=True)) == [
        question
    ]
    second.refresh_from_db()
    assert second.status == DraftingItem.Status.DRAFTED and second.instance_count == 0
    (rejected,) = second.raw_output["rejected"]
    assert (rejected["matched"], rejected["measure"]) == (question, "exact")
    assert second.raw_output["question"] == f"Question: {question.upper()}!"  # the model's output is kept
    assert second.error.startswith("rejected at commit: repeats an existing question (word for word)")


@postgres_only()
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_commit_waits_for_the_paper_a_parallel_commit_holds(project, personas, drafting_batch):
    # Real transactions: the second commit begins while the first, its drafts written, has not committed yet.
    contexts = make_contexts(project, drafting_batch, 2, one_paper=True)
    run = run_create(
        project=project, actor=personas["manager"], kind="template", batch=drafting_batch, options={"chunk_size": 1}
    )
    (first, first_token), (second, second_token) = _claimed(run)
    outcomes = [Drafter(run).draft(first.context), Drafter(run).draft(second.context)]
    inside, errors = threading.Event(), []

    def hold(**_: object) -> None:  # sent inside the first commit's transaction, after its drafts
        if threading.current_thread().name == "first":
            inside.set()
            time.sleep(1.0)

    def commit(item: DraftingItem, token: str, outcome: Outcome) -> None:
        try:
            if threading.current_thread().name == "second":
                assert inside.wait(10)
            _item_commit(run, item, token, outcome)
        except BaseException as error:  # reported below
            errors.append(error)
        finally:
            connection.close()

    drafts_committed.connect(hold, dispatch_uid="hold-first-commit")
    try:
        threads = [
            threading.Thread(target=commit, args=(first, first_token, outcomes[0]), name="first"),
            threading.Thread(target=commit, args=(second, second_token, outcomes[1]), name="second"),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        drafts_committed.disconnect(dispatch_uid="hold-first-commit")
    assert errors == []
    asked = Counter(Instance.objects.filter(context__paper=contexts[0].paper).values_list("question", flat=True))
    assert asked == Counter(fields["question"] for fields in outcomes[0].drafts)
    assert DraftingItem.objects.get(pk=second.pk).instance_count == 0

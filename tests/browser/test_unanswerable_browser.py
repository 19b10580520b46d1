"""An unanswerable question in a real browser: refined as "not answerable" with a reason, seen in both rounds,
frozen into the release's unanswerable split, and credited as an abstention when a predictions file is scored."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from curation.batches.services import batch_create, batch_open
from curation.models import Instance
from curation.releases.models import Release
from curation.states import Status
from scoring.runs.models import ScoringRun
from tests.browser.conftest import follow, open_in_project, shot, type_into
from tests.browser.test_review_flow import open_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_unanswerable_question_from_draft_to_a_scored_abstention(
    browser, live_server, personas, project, make_instance, tmp_path
):
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="Batch 1").pk, actor=None)
    draft = make_instance(batch=batch, question="What does model C reach?", draft={"question": "What does C reach?"})

    # The annotator marks it not answerable: the reason box appears, and the guard wants a reason and no answer.
    annotator = open_as(browser, live_server, "annotator")
    open_in_project(annotator, "Work queue")
    annotator.keyboard.press("n")
    annotator.wait_for_url(re.compile(rf"/work/{draft.pk}/$"))
    expect(annotator.locator("#f-unanswerable-reason")).to_be_hidden()
    annotator.get_by_label("Not answerable from this context").click()
    expect(annotator.locator("#f-unanswerable-reason")).to_be_visible()
    # The answer items step aside while the box is ticked (a not-answerable question has no answer to send).
    expect(annotator.locator("#answer-items")).to_be_hidden()
    annotator.click("#submit-button")
    expect(annotator.locator("#problems")).to_contain_text("Say why this context cannot answer")
    type_into(annotator, "#f-unanswerable-reason", "Table 1 reports models A and B only; C is not in the paper.")
    shot(annotator, "workspace-unanswerable", full_page=True)
    annotator.click("#submit-button")
    annotator.wait_for_url(lambda url: f"/work/{draft.pk}/" not in url)
    refined = Instance.objects.get(pk=draft.pk)
    assert (refined.status, refined.is_answerable) == (Status.SUBMITTED, False)
    assert not any(item.strip() for item in refined.answer)

    # Round one: the verifier sees that it is unanswerable and why, and approves.
    verifier = open_as(browser, live_server, "verifier")
    open_in_project(verifier, "Review queue")
    verifier.click("#review-next")
    verifier.wait_for_url(re.compile(rf"/review/{draft.pk}/$"))
    expect(verifier.locator("#v-answerability")).to_contain_text("Not answerable from this context")
    expect(verifier.locator("#v-answerability")).to_contain_text("C is not in the paper")
    shot(verifier, "review-unanswerable", full_page=True)
    verifier.keyboard.press("Alt+a")
    verifier.wait_for_url(re.compile(r"/review/$"))

    # Round two: the other annotator sees it too and confirms.
    second = open_as(browser, live_server, "annotator2")
    open_in_project(second, "Round two")
    second.click("#round2-next")
    second.wait_for_url(re.compile(rf"/round2/{draft.pk}/$"))
    expect(second.locator("#v-answerability")).to_contain_text("C is not in the paper")
    second.click("#confirm-button")
    second.wait_for_url(lambda url: f"/round2/{draft.pk}/" not in url)
    assert Instance.objects.get(pk=draft.pk).status == Status.VALIDATED

    # The release freezes it into the unanswerable split; its statistics say so.
    manager = open_as(browser, live_server, "manager")
    open_in_project(manager, "Releases")
    type_into(manager, "#cut-release input[name=name]", "abstain")
    manager.locator("#cut-release").get_by_label("Batch 1 (1 validated)").click()
    manager.get_by_role("button", name="Cut release").click()
    expect(manager.locator(".messages")).to_contain_text("Release abstain-v1 cut: 1 instance frozen.")
    release = Release.objects.get(name="abstain")
    item = release.items.get()
    assert item.split == "unanswerable" and item.data["is_answerable"] is False and item.data["answer"] == []
    expect(manager.locator("#release-splits")).to_contain_text("unanswerable (gold: abstain) 1")
    shot(manager, "release-splits", full_page=True)

    # A predictions file that abstains scores 100% on the unanswerable questions.
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"uid": item.uid, "answer": ["Not answerable"]}) + "\n")
    follow(manager, "Score a model")
    upload = manager.locator("#upload-predictions")
    upload.locator("select[name=format]").select_option("jsonl")
    upload.locator("input[name=file]").set_input_files(str(predictions))
    upload.get_by_role("button", name="Score file").click()
    expect(manager.locator("h1")).to_contain_text("Scoring run")
    table = manager.locator("#answerability")
    expect(table.locator("tr", has_text="Unanswerable (abstained)")).to_contain_text("100%")
    shot(manager, "run-answerability", full_page=True)
    run = ScoringRun.objects.get(release=release)
    assert run.predictions.get().is_correct is True

"""Both validation rounds in a real browser with four personas, sequential gating, and the dashboard's counts."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.review.models import Discussion
from curation.batches.services import batch_create, batch_open, project_gating_set
from curation.models import Batch, Instance
from curation.states import Status
from tests.browser.conftest import open_in_project, type_into
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_as(browser, live_server, username: str):
    """A page in its own browser context, logged in through the real form."""
    context = browser.new_context()
    context.set_default_timeout(15000)
    page = context.new_page()
    page.goto(f"{live_server.url}/")
    type_into(page, "input[name=username]", username)
    type_into(page, "input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return page


def test_four_personas_take_a_batch_through_both_rounds(browser, live_server, personas, project, make_instance):
    first = batch_open(batch_id=batch_create(project=project, actor=None, name="Batch 1").pk, actor=None)
    second = batch_create(project=project, actor=None, name="Batch 2")
    project_gating_set(project=project, actor=personas["manager"], gating="sequential")
    draft = make_instance(
        batch=first, question="Draft: which model wins?", draft={"question": "Draft: which model wins?"}
    )
    make_instance(batch=second)

    # 1. The annotator refines the draft and submits.
    annotator = open_as(browser, live_server, "annotator")
    open_in_project(annotator, "Work queue")
    annotator.keyboard.press("n")
    annotator.wait_for_url(re.compile(rf"/work/{draft.pk}/$"))
    type_into(annotator, "#f-question", "Which model is more accurate?")
    type_into(annotator, "#f-rationale", "Table 1: A 87.3 against B 81.0.")
    type_into(annotator, "input[name=answer]", "A")
    annotator.check("input[name=answer_form][value=short]")
    annotator.check("input[name=answer_source][value=table]")
    annotator.check("input[name=answer_type][value=span]")
    annotator.check("input[name=relevant_table_ids]")
    annotator.keyboard.press("Control+Enter")
    annotator.wait_for_url(lambda url: f"/work/{draft.pk}/" not in url)
    assert Instance.objects.get(pk=draft.pk).status == Status.SUBMITTED

    # 2. The verifier requests a change on the answer.
    verifier = open_as(browser, live_server, "verifier")
    open_in_project(verifier, "Review queue")
    verifier.click("#review-next")
    verifier.wait_for_url(re.compile(rf"/review/{draft.pk}/$"))
    expect(verifier.locator("#v-question")).to_contain_text("Which model is more accurate?")
    expect(verifier.locator("#diff-panel")).to_contain_text("Draft:")  # the LLM draft's words, struck out
    type_into(verifier, "#c-answer", "Give the model's full name.")
    verifier.click("#changes-button")
    verifier.wait_for_url(re.compile(r"/review/$"))
    assert Instance.objects.get(pk=draft.pk).status == Status.CHANGES_REQUESTED

    # 3. The annotator sees the comment at the top of their queue, fixes the answer and resubmits.
    open_in_project(annotator, "Work queue")
    annotator.keyboard.press("n")
    annotator.wait_for_url(re.compile(rf"/work/{draft.pk}/$"))
    expect(annotator.locator(".review-comments-for-author")).to_contain_text("Give the model's full name.")
    type_into(annotator, "input[name=answer]", "Model A")
    annotator.keyboard.press("Control+Enter")
    annotator.wait_for_url(lambda url: f"/work/{draft.pk}/" not in url)
    assert Instance.objects.get(pk=draft.pk).status == Status.SUBMITTED

    # 4. It returns to the same verifier, who approves with the keyboard.
    open_in_project(verifier, "Review queue")
    verifier.click("#review-next")
    verifier.wait_for_url(re.compile(rf"/review/{draft.pk}/$"))
    expect(verifier.locator("#v-answer")).to_contain_text("Model A")
    verifier.keyboard.press("?")
    expect(verifier.locator("#shortcuts")).to_be_visible()
    verifier.keyboard.press("Escape")
    verifier.keyboard.press("Alt+a")
    verifier.wait_for_url(re.compile(r"/review/$"))
    assert Instance.objects.get(pk=draft.pk).status == Status.ROUND2_REVIEW

    # 5. The second annotator flags an error in round two: a discussion opens.
    second_annotator = open_as(browser, live_server, "annotator2")
    open_in_project(second_annotator, "Round two")
    second_annotator.click("#round2-next")
    second_annotator.wait_for_url(re.compile(rf"/round2/{draft.pk}/$"))
    type_into(second_annotator, "#c-question", "Accuracy on which split? The paper reports two.")
    second_annotator.click("#flag-button")
    second_annotator.wait_for_url(re.compile(r"/discussions/\d+/$"))
    assert Instance.objects.get(pk=draft.pk).status == Status.IN_DISCUSSION

    # 6. The verifier sees the badge, replies, and resolves by correcting the question: validated.
    open_in_project(verifier, "Review queue")
    expect(verifier.locator("#open-discussions-badge")).to_have_text("1")
    verifier.click("#open-discussions a")
    verifier.wait_for_url(re.compile(r"/discussions/\d+/$"))
    expect(verifier.locator(".messages-thread")).to_contain_text("Accuracy on which split?")
    type_into(verifier, "#reply-text", "Right: it is the test split.")
    verifier.click("#reply-button")
    expect(verifier.locator(".messages-thread")).to_contain_text("Right: it is the test split.")
    verifier.click("#edit-details summary")
    type_into(verifier, "#e-question", "Which model is more accurate on the test split?")
    verifier.click("#accept-edit-button")
    expect(verifier.locator("#discussion-state")).to_contain_text("Flag accepted")
    final = Instance.objects.get(pk=draft.pk)
    assert final.status == Status.VALIDATED
    assert final.question == "Which model is more accurate on the test split?"
    discussion = Discussion.objects.get(instance=final)
    assert (discussion.outcome, discussion.decided_by_id) == ("accepted", personas["verifier"].pk)

    # 7. Sequential gating opened the next batch; the dashboard shows the batch complete and each person's figures.
    assert Batch.objects.get(pk=second.pk).state == Batch.State.OPEN
    manager = open_as(browser, live_server, "manager")
    open_in_project(manager, "Dashboard")
    row = manager.locator('#batch-table tr[data-batch="Batch 1"]')
    expect(row).to_have_attribute("data-total", "1")
    expect(row).to_have_attribute("data-validated", "1")
    expect(row.locator(".badge.complete")).to_be_visible()
    expect(manager.locator('#batch-table tr[data-batch="Batch 2"]')).to_contain_text("open")
    expect(manager.locator('#annotators tr[data-user="annotator"] .refined')).to_have_text("1")
    expect(manager.locator('#annotators tr[data-user="annotator2"] .round2')).to_have_text("1")
    expect(manager.locator('#verifiers tr[data-user="verifier"] .reviews')).to_have_text("2")
    expect(manager.locator('#verifiers tr[data-user="verifier"] .changes')).to_have_text("1")
    expect(manager.locator('#verifiers tr[data-user="verifier"] .resolved')).to_have_text("1")
    expect(manager.locator("#pay-total-instances")).to_have_text("1")


def test_a_lone_verifier_gives_a_discussion_back_and_takes_it_again(browser, live_server, personas, project, drafts):
    from curation.models import Membership
    from tests.annotate.review.helpers import to_discussion

    Membership.objects.filter(user=personas["verifier2"]).delete()
    discussion = to_discussion(project, personas)
    page = open_as(browser, live_server, "verifier")
    open_in_project(page, "Discussions")
    page.get_by_role("link", name=re.compile(f"#{discussion.instance_id} ")).click()
    page.locator("#give-back-button").click()
    expect(page.locator(".messages")).to_contain_text("Given back")
    expect(page.locator("table.grid")).to_contain_text("given back, waiting")
    page.locator("#next-discussion").click()
    expect(page.locator("#reject-button")).to_be_visible()
    page.locator("#reject-button").click()
    expect(page.locator("#discussion-state")).to_contain_text("Flag rejected")
    assert Instance.objects.get(pk=discussion.instance_id).status == Status.VALIDATED

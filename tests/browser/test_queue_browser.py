"""The annotator's queue page in a real browser: work sent back opens at once while a draft is held."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.review import services as review
from annotate.work.workspace import workspace_autosave
from curation.batches.services import batch_create, batch_open
from curation.models import Instance
from curation.states import Status
from tests.annotate.review.helpers import submit
from tests.annotate.work.helpers import queue_next
from tests.browser.conftest import shot
from tests.browser.test_review_flow import open_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sent_back_work_opens_from_the_queue_page_while_a_draft_is_held(
    browser, live_server, personas, project, make_instance
):
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="Batch 1").pk, actor=None)
    for _ in range(2):
        make_instance(batch=batch)
    annotator = personas["annotator"]
    sent_back = submit(project, annotator)
    held = queue_next(project=project, user=annotator)
    workspace_autosave(
        instance_id=held.pk, user=annotator, expected_version=held.version, fields={"question": "Half done?"}
    )
    claimed = review.review_claim(instance_id=sent_back.pk, user=personas["verifier"])
    review.review_request_changes(
        instance_id=claimed.pk,
        user=personas["verifier"],
        expected_version=claimed.version,
        comments=[{"field": "question", "text": "Ask about the second table."}],
    )

    page = open_as(browser, live_server, "annotator")
    page.goto(f"{live_server.url}/p/{project.slug}/work/")
    expect(page.get_by_role("heading", name="Sent back to you")).to_be_visible()
    expect(page.get_by_role("heading", name="In your hands")).to_be_visible()
    shot(page, "queue", full_page=True)
    page.get_by_role("button", name=f"Open #{sent_back.pk}").click()
    page.wait_for_url(re.compile(rf"/work/{sent_back.pk}/$"))
    expect(page.locator(".review-comments-for-author")).to_contain_text("Ask about the second table.")
    assert Instance.objects.get(pk=sent_back.pk).status == Status.IN_REFINEMENT

    page.go_back()
    page.reload()
    page.get_by_role("link", name=re.compile(rf"#{held.pk} Half done\?")).click()
    page.wait_for_url(re.compile(rf"/work/{held.pk}/$"))
    expect(page.locator("#f-question")).to_have_value("Half done?")
    assert Instance.objects.get(pk=held.pk).author == annotator

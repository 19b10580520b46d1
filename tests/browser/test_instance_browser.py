"""The instance browser by clicks: a manager finds drafts by search and filter, assigns one in bulk, and the
annotator it went to sees it in their queue as assigned to them."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from curation.models import Instance
from tests.browser.conftest import person, shot
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_manager_searches_filters_and_assigns_by_clicks(browser, live_server, personas, project, drafts, make_instance):
    target = make_instance(batch=drafts[0].batch, question="What is the recall of model B?", answer=["0.42"])
    page = person(browser, live_server, "manager", PASSWORD)
    page.get_by_role("link", name=project.name).first.click()
    page.locator("nav.project-nav").get_by_role("link", name="Instances").click()
    expect(page.locator("#result-count")).to_contain_text(f"{len(drafts) + 1} instances")

    page.click("#id_q")
    page.keyboard.type("recall")
    page.select_option("#id_status", "drafted")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#result-count")).to_contain_text("1 instance")
    expect(page.locator("#instance-table tbody tr")).to_have_count(1)
    shot(page, "instances-1366", full_page=True)

    page.get_by_label(f"Select instance {target.pk}").click()
    page.select_option("#bulk_action", "assign")
    page.select_option("#bulk_assignee", "annotator2")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator(".messages")).to_contain_text("1 draft assigned to annotator2")
    expect(page.locator(f"tr[data-instance='{target.pk}']")).to_contain_text("assigned to annotator2")
    expect(page.locator("#id_q")).to_have_value("recall")  # the filters survive the action
    assert Instance.objects.get(pk=target.pk).assigned_to == personas["annotator2"]

    # A discard without a reason is refused on the page, beside the field, and changes nothing.
    page.get_by_label(f"Select instance {target.pk}").click()
    page.select_option("#bulk_action", "discard")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#bulk-actions")).to_contain_text("This action needs it.")
    assert Instance.objects.get(pk=target.pk).status == "drafted"

    annotator = person(browser, live_server, "annotator2", PASSWORD)
    annotator.get_by_role("link", name=project.name).first.click()
    annotator.locator("nav.project-nav").get_by_role("link", name="Work queue").click()
    expect(annotator.locator("#assigned")).to_contain_text(f"#{target.pk}")
    annotator.get_by_role("button", name="Take the next draft").click()
    annotator.wait_for_url(f"**/work/{target.pk}/")


def test_the_browser_fits_a_phone(browser, live_server, personas, project, drafts):
    page = person(browser, live_server, "manager", PASSWORD, viewport={"width": 390, "height": 900})
    page.get_by_role("link", name=project.name).first.click()
    page.locator("nav.project-nav").get_by_role("link", name="Instances").click()
    page.click("#id_q")
    page.keyboard.type("Which")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#instance-table tbody tr")).to_have_count(len(drafts))
    shot(page, "instances-390", full_page=True)
    page.get_by_label("Select every instance on this page").click()
    expect(page.locator("#instance-table input[name=instances]:checked")).to_have_count(len(drafts))
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"

"""Hidden gold in a real browser: the annotator answers an item the queue served, fails it and is paused; the
manager sees the alert on the dashboard and restores them with a reason."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.quality.models import GoldProbe, QualityDecision
from curation.models import Membership
from curation.states import Role
from tests.annotate.qualification_support import make_gold
from tests.annotate.quality_helpers import gold_on, work_until_probe
from tests.browser.conftest import follow, type_into
from tests.browser.test_review_flow import open_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = "/tmp/s21-shots"


def test_a_failing_annotator_is_paused_and_a_manager_restores_them(
    browser, live_server, personas, project, context, drafts
):
    make_gold(project, context)
    gold_on(project, personas["manager"], gold_threshold=0.9, gold_min_sample=1, is_pause_on_fail=True)
    annotator = personas["annotator"]
    probe = work_until_probe(project=project, user=annotator)  # the queue has an item of hidden gold for them

    page = open_as(browser, live_server, "annotator")
    page.goto(f"{live_server.url}/p/{project.slug}/work/")
    page.locator("#next-button").click()
    page.wait_for_url(re.compile(rf"/work/item/{probe.pk}/$"))
    expect(page.get_by_role("heading", name=re.compile("Refine"))).to_be_visible()
    expect(page.locator(".ws-context")).to_contain_text("Accuracy by model.")
    expect(page.locator("#probe-form")).to_contain_text(probe.gold.question)
    page.screenshot(path=f"{SHOTS}/probe.png", full_page=True)
    type_into(page, "#f-answer", "a wrong answer")
    type_into(page, "#f-rationale", "I guessed.")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(re.compile(r"/work/$"))
    expect(page.locator("body")).to_contain_text("Submitted.")
    assert GoldProbe.objects.get(pk=probe.pk).em == 0.0
    assert not Membership.objects.get(project=project, user=annotator, role=Role.ANNOTATOR).is_qualified

    manager = open_as(browser, live_server, "manager")
    follow(manager, "Test Project", within="header.topbar nav")
    follow(manager, "Dashboard")
    row = manager.locator("#gold-table tr[data-user=annotator]")
    expect(row).to_contain_text("below the threshold")
    expect(row).to_contain_text("paused")
    expect(row.locator("td.em")).to_have_text("0.00")
    manager.locator("#hidden-gold").screenshot(path=f"{SHOTS}/dashboard-gold.png")
    expect(manager.locator("#drift figure[data-user=annotator]")).to_be_visible()  # the gold EM line of the week
    manager.locator("#drift").screenshot(path=f"{SHOTS}/dashboard-drift.png")
    type_into(manager, "#gold-table input[name=reason]", "Went through the guidelines together")
    row.get_by_role("button", name="Restore").click()
    manager.wait_for_url(re.compile(r"/dashboard/#hidden-gold$"))
    expect(manager.locator("body")).to_contain_text("Restored")
    assert Membership.objects.get(project=project, user=annotator, role=Role.ANNOTATOR).is_qualified
    assert list(QualityDecision.objects.filter(user=annotator).values_list("action", flat=True)) == [
        "restored",
        "paused",
    ]

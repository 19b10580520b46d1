"""Hidden gold in a real browser: the annotator answers an item the queue served in the ordinary workspace, fails it and
is paused; the manager sees the alert on the dashboard and restores them with a reason."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.quality.models import GoldProbe, QualityDecision
from curation.models import Instance, Membership
from curation.states import Role
from tests.annotate.quality.helpers import gold_on, make_refined_gold, work_until_probe
from tests.browser.conftest import follow, shot, type_into
from tests.browser.test_review_flow import open_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_failing_annotator_is_paused_and_a_manager_restores_them(
    browser, live_server, personas, project, context, drafts
):
    make_refined_gold(project, context)  # gold refined from drafts that said something else
    gold_on(project, personas["manager"], gold_threshold=0.9, gold_min_sample=1, is_pause_on_fail=True)
    annotator = personas["annotator"]
    probe = work_until_probe(project=project, user=annotator)  # the queue has an item of hidden gold for them

    page = open_as(browser, live_server, "annotator")
    page.goto(f"{live_server.url}/p/{project.slug}/work/")
    expect(page.locator("main")).to_contain_text(f"#{probe.instance_id}")  # "In your hands", as a draft would be
    page.locator("#next-button").click()
    # The ordinary workspace, at an instance's URL: autosave, shortcuts, skip, diff.
    page.wait_for_url(re.compile(rf"/work/{probe.instance_id}/$"))
    expect(page.get_by_role("heading", name=re.compile(rf"Refine #{probe.instance_id}"))).to_be_visible()
    expect(page.locator(".ws-context")).to_contain_text("Accuracy by model.")
    expect(page.locator("#f-question")).to_have_value(probe.gold.question)
    expect(page.locator("#skip-button")).to_be_visible()
    # Opened as its gold was drafted: the draft's answer and rationale, as a real draft opens.
    expect(page.locator("#refine-form input[name=answer]")).to_have_value(probe.gold.draft["answer"][0])
    expect(page.locator("#f-rationale")).to_have_value(probe.gold.draft["rationale"])
    shot(page, "probe", full_page=True)
    type_into(page, "#refine-form input[name=answer]", "a wrong answer")
    page.locator("#refine-form input[name=answer]").blur()
    expect(page.locator("#save-state")).to_have_text("All changes saved")
    assert Instance.objects.get(pk=probe.instance_id).answer == ["a wrong answer"]  # autosaved as a draft is
    page.reload()
    expect(page.locator("#refine-form input[name=answer]")).to_have_value("a wrong answer")
    type_into(page, "#f-rationale", "I guessed.")
    page.locator("h1").click()
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    page.check("input[name=answer_form][value=short]")
    page.check("input[name=answer_source][value=table]")
    page.check("input[name=relevant_table_ids]")
    page.check("input[name=answer_type][value=span]")  # over the type the draft came with, as on any draft
    expect(page.locator("input[name=answer_type][value=span]")).to_be_checked()
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda url: f"/work/{probe.instance_id}/" not in url)
    assert GoldProbe.objects.get(pk=probe.pk).em == 0.0
    assert Instance.objects.get(pk=probe.instance_id).rationale == "I guessed."
    assert not Membership.objects.get(project=project, user=annotator, role=Role.ANNOTATOR).is_qualified

    manager = open_as(browser, live_server, "manager")
    follow(manager, "Test Project", within="header.topbar nav")
    follow(manager, "Dashboard")
    row = manager.locator("#gold-table tr[data-user=annotator]")
    expect(row).to_contain_text("below the threshold")
    expect(row).to_contain_text("paused")
    expect(row.locator("td.em")).to_have_text("0.00")
    shot(manager.locator("#hidden-gold"), "dashboard-gold")
    expect(manager.locator("#drift figure[data-user=annotator]")).to_be_visible()  # the gold EM line of the week
    shot(manager.locator("#drift"), "dashboard-drift")
    type_into(manager, "#gold-table input[name=reason]", "Went through the guidelines together")
    row.get_by_role("button", name="Restore").click()
    manager.wait_for_url(re.compile(r"/dashboard/#hidden-gold$"))
    expect(manager.locator("body")).to_contain_text("Restored")
    assert Membership.objects.get(project=project, user=annotator, role=Role.ANNOTATOR).is_qualified
    assert list(QualityDecision.objects.filter(user=annotator).values_list("action", flat=True)) == [
        "restored",
        "paused",
    ]

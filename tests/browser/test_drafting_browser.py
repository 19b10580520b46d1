"""The drafting page's choice of templates, by a manager with the keyboard: "Select all" selects every template and
the run drafts with all of them; "Clear" selects none, which the page says means each context's reasoning type."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from curation.drafting.models import DraftingRun
from curation.drafting.templates import TEMPLATES
from tests.browser.conftest import open_in_project
from tests.curation.drafting.conftest import make_contexts

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_select_all_chooses_every_template_and_clear_none(page, live_server, login, project, personas, settings):
    from curation.models import Batch

    settings.CELERY_TASK_ALWAYS_EAGER = True
    batch = Batch.objects.create(project=project, name="Template batch", state=Batch.State.OPEN)
    make_contexts(project, batch, 1)
    login(page, "manager")
    open_in_project(page, "Drafting")
    page.locator("#new-run select[name=batch]").select_option(label="Template batch (Open)")
    page.get_by_label("Templates: answers computed by tool programs (no model)").click()
    choice = page.get_by_label("Only these templates")
    expect(choice).to_have_accessible_description(
        "None selected: each context is drafted with the templates of its reasoning type (every template when it has "
        "none). Selected: only those, whatever its type."
    )
    choice.select_option(["extreme_row"])
    expect(page.locator("#template-choice output")).to_have_text(f"1 of {len(TEMPLATES)} selected")
    choice.focus()
    page.keyboard.press("Tab")  # the next stop after the list is its "Select all"
    expect(page.get_by_role("button", name="Select all")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#template-choice output")).to_have_text(f"{len(TEMPLATES)} of {len(TEMPLATES)} selected")
    assert choice.evaluate("s => [...s.selectedOptions].map(o => o.value)") == [t.template_id for t in TEMPLATES]
    page.get_by_role("button", name="Clear").click()
    expect(page.locator("#template-choice output")).to_have_text("none selected")
    assert choice.evaluate("s => s.selectedOptions.length") == 0
    page.get_by_role("button", name="Select all").click()
    page.get_by_role("button", name="Start drafting").click()
    expect(page.locator("#run-status")).to_contain_text("Completed")
    run = DraftingRun.objects.get(batch=batch)
    assert run.options["template_ids"] == [t.template_id for t in TEMPLATES]
    expect(page.locator("dl.facts")).to_contain_text(TEMPLATES[-1].template_id)

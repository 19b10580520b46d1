"""What the drafts cost, in a real browser: a manager opens the dashboard, sees the charts by drafter and prompt
version, opens the figures, and downloads the CSV beside them."""

from __future__ import annotations

import csv
import io

import pytest
from playwright.sync_api import expect

from curation.models import Instance
from tests.annotate.dashboard.test_draft_costs import llm_draft, template_draft
from tests.annotate.review.helpers import submit
from tests.browser.conftest import open_in_project, shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_manager_sees_the_draft_costs_and_downloads_the_csv(page, live_server, login, personas, project, context):
    from curation.batches.services import batch_create, batch_open

    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="B1").pk, actor=None)
    tables = sorted(context.tables.values_list("id", flat=True))
    for draft, question in (
        (llm_draft(tables), "Which model is more accurate?"),  # kept as drafted
        (llm_draft(tables), "By how many points does A beat B on accuracy in Table 1?"),  # rewritten
        (template_draft(tables), "Which model has the highest accuracy?"),
    ):
        instance = Instance.objects.create(
            project=project, batch=batch, context=context, question=draft["question"], draft=draft
        )
        submit(project, personas["annotator"], instance, question=question, relevant_table_ids=tables)

    login(page, "manager")
    open_in_project(page, "Dashboard")
    section = page.locator("#draft-costs")
    section.scroll_into_view_if_needed()
    expect(section.get_by_role("heading", name="What the drafts cost")).to_be_visible()
    expect(section).to_contain_text("3 drafted instances submitted so far.")
    by_drafter = section.locator("figure[data-dimension=drafter]")
    expect(by_drafter.locator("svg.bar-chart").first).to_be_visible()
    expect(by_drafter.locator("svg.bar-chart text").filter(has_text="llm").first).to_be_visible()
    expect(by_drafter.locator("tr[data-group=llm] td.instances")).to_have_text("2")
    # The LLM's question: one of two kept, one rewritten.
    expect(by_drafter.locator("tr[data-group=llm] td[data-field=question]")).to_contain_text("· 50 % · 50 %")
    by_prompt = section.locator("figure[data-dimension=prompt_version]")
    by_prompt.locator("summary").click()
    expect(by_prompt.locator("tr[data-group='template max_row']")).to_be_visible()
    shot(section, "draft-costs")

    with page.expect_download() as download:
        section.get_by_role("link", name="draft costs").click()
    rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
    (question,) = [r for r in rows if (r["dimension"], r["group"], r["field"]) == ("drafter", "llm", "question")]
    assert (question["instances"], question["unchanged_share"], question["rewritten_share"]) == ("2", "0.5", "0.5")


@pytest.mark.parametrize("width", [390, 1366])
def test_the_section_fits_narrow_and_wide_screens(page, live_server, login, personas, project, width):
    page.set_viewport_size({"width": width, "height": 900})
    login(page, "manager")
    open_in_project(page, "Dashboard")
    section = page.locator("#draft-costs")
    section.scroll_into_view_if_needed()
    expect(section).to_contain_text("No drafted instance was submitted yet")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0


def test_a_long_group_name_is_not_cut_off_at_the_charts_left_edge(page, live_server, login, personas, project, context):
    from curation.batches.services import batch_create, batch_open

    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="B1").pk, actor=None)
    tables = sorted(context.tables.values_list("id", flat=True))
    draft = {**template_draft(tables), "template_id": "change_between_columns"}  # "template change_between_columns"
    instance = Instance.objects.create(
        project=project, batch=batch, context=context, question=draft["question"], draft=draft
    )
    submit(
        project,
        personas["annotator"],
        instance,
        question="Which model is the most accurate?",
        relevant_table_ids=tables,
    )

    login(page, "manager")
    open_in_project(page, "Dashboard")
    by_prompt = page.locator("#draft-costs figure[data-dimension=prompt_version]")
    by_prompt.scroll_into_view_if_needed()
    label = by_prompt.locator("svg.bar-chart text").filter(has_text="template").first
    expect(label).to_be_visible()
    # Where the label's first letter is drawn, in the chart's own coordinates: left of 0 is cut off by the chart's edge.
    assert label.evaluate("text => text.getBBox().x") >= 0, label.text_content()

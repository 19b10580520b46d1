"""A manager fills a batch with one sampled context per paper from the batch page, reached by links."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from curation.models import Context
from tests.factories import BatchFactory, PaperFactory, ShortContextFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_manager_samples_one_context_per_paper_from_the_batches_page(page, live_server, login, personas, project):
    for index, count in enumerate((3, 2, 1)):
        ShortContextFactory.create_batch(count, paper=PaperFactory(project=project, title=f"Paper {index}"))
    batch = BatchFactory(project=project, name="Pilot")
    login(page, "manager")
    page.get_by_role("link", name=project.name).first.click()
    page.get_by_role("link", name="Batches").first.click()
    section = page.locator("#fill-from-papers")
    expect(section).to_contain_text("all 3 contexts of “Paper 0”")
    section.get_by_label("Contexts per paper").click()
    page.keyboard.type("1")
    section.get_by_label("Seed").click()
    page.keyboard.press("Control+a")
    page.keyboard.type("7")
    section.get_by_role("button", name="Fill the batch").click()
    expect(page.locator("body")).to_contain_text("3 contexts from 3 papers (1 per paper of the short contexts, seed 7)")
    chosen = Context.objects.filter(batch=batch)
    assert chosen.count() == 3 and len({c.paper_id for c in chosen}) == 3
    # What is left: 2 + 1 contexts of the first two papers; the page offers them, and "all of a paper" takes them.
    expect(section).to_contain_text("all 2 contexts of “Paper 0”")
    section.get_by_label("all 1 context of “Paper 1”").check()
    section.get_by_role("button", name="Fill the batch").click()
    expect(page.locator("body")).to_contain_text("1 context from 1 paper (all their short contexts")
    assert Context.objects.filter(batch=batch).count() == 4


def test_each_batch_deadline_is_named_on_a_phone(page, live_server, login, personas, project):
    """At 390 px the progress table stacks one card per batch: the deadline ("—" when none) is named by its column,
    though the manager's cell also holds the labelled form that sets it."""
    BatchFactory(project=project, name="Pilot")
    login(page, "manager")
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{live_server.url}/p/{project.slug}/batches/")
    cell = page.locator("#batch-progress td.batch-deadline").first
    expect(cell).to_contain_text("—")
    named = cell.evaluate("td => getComputedStyle(td, '::before').content")
    assert named == '"Deadline: "', named

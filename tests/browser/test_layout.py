"""Layout check: on each role's main pages, reached by clicking through the navigation, every form control can be
reached and is not covered (the element at its centre is the control or inside it), no button keeps the browser's
default style, and the page never scrolls sideways, at a laptop width (1366 px) and a phone width (390 px)."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from playwright.sync_api import expect

from curation.models import Batch, Instance, Project
from curation.releases.services.cut import release_cut
from tests.browser.conftest import follow, follow_project_nav, log_in, shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1366, 390)
PROJECT = "Demo: sparse adapters paper"

# Each role's main pages, as the names of the links in the project navigation.
PAGES = {
    "manager": [
        "Papers",
        "Batches",
        "Drafting",
        "Model endpoints",
        "Prompt templates",
        "Dashboard",
        "Exam settings",
        "Import a dataset",
        "Import drafts",
        "Webhooks",
        "Releases",
        "Discussions",
        "Guidelines",
    ],
    "verifier": ["Review queue", "Papers", "Discussions", "Releases"],
    "annotator": ["Qualification exam", "Guidelines", "Releases"],
    "annotator2": ["Work queue", "Round two", "Releases"],
}

# A JS function returning the problems it finds (its leading comment lines are dropped: evaluate() wants a function).
PROBLEMS = "\n".join(
    line for line in (Path(__file__).parent / "layout_check.js").read_text().splitlines() if not line.startswith("//")
)


@pytest.fixture
def demo_with_release(db):
    call_command("demo", "--json", stdout=StringIO())
    project = Project.objects.get(slug="demo")
    batch = Batch.objects.get(project=project, name="Validated demo items")
    return release_cut(project=project, actor=None, name="demo", batch_ids=[batch.pk], include_withheld=True)


def check(page, where: str) -> list[str]:
    found = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        problems = page.evaluate(PROBLEMS)
        assert isinstance(problems, list), "the layout check did not run"
        found += [f"{where} at {width} px: {p}" for p in problems]
    page.set_viewport_size({"width": 1366, "height": 800})
    return found


@pytest.mark.parametrize("username", sorted(PAGES))
def test_every_control_of_the_main_pages_is_reachable_and_uncovered(page, live_server, demo_with_release, username):
    log_in(page, live_server.url, username, f"demo-{username}")
    problems = check(page, "home")
    follow(page, PROJECT, within="main")
    problems += check(page, "project page")
    for name in PAGES[username]:
        follow_project_nav(page, name)
        problems += check(page, name)
    if username == "manager":
        follow_project_nav(page, "Papers")
        follow(page, "Upload LaTeX sources")
        problems += check(page, "upload")
        follow_project_nav(page, "Papers")
        page.locator("#paper-list a").first.click()
        problems += check(page, "paper page")
        follow_project_nav(page, "Releases")
        follow(page, "demo", within="main")
        problems += check(page, "release page")
        follow(page, "Score a model")
        problems += check(page, "score page")
    if username == "annotator2":
        follow_project_nav(page, "Work queue")
        page.click("#next-button")
        page.wait_for_url(re.compile(r"/work/\d+/$"))
        expect(page.locator("#f-question")).to_be_visible()
        problems += check(page, "workspace")
    assert not problems, "\n".join(problems)


def test_the_layout_check_catches_the_old_progress_bar_collision_a_sideways_scroll_and_a_default_button(
    page, live_server, demo_with_release
):
    log_in(page, live_server.url, "manager", "demo-manager")
    follow(page, PROJECT, within="main")
    follow_project_nav(page, "Drafting")
    assert page.evaluate(PROBLEMS) == []
    # What `.stacked` did to the drafting form before the progress-bar class was renamed:
    # Styles set through the CSSOM (a <style> tag would be refused by the Content-Security-Policy).
    page.evaluate(
        "document.querySelectorAll('form.form-stack').forEach("
        "f => Object.assign(f.style, {display: 'flex', height: '18px', overflow: 'hidden'}))"
    )
    assert any("cut off by form.form-stack" in p for p in page.evaluate(PROBLEMS))
    page.evaluate("document.querySelector('main').style.minWidth = '1800px'")
    assert any("page scrolls sideways" in p for p in page.evaluate(PROBLEMS))
    # A button left to the browser's own style (what a plain <button> looked like before app.css styled them all).
    # (The forms clipped above are let out first: a clipped button is reported as cut off, before its style is read.)
    page.evaluate("document.querySelectorAll('form.form-stack').forEach(f => f.style.cssText = '')")
    page.evaluate("[...document.querySelectorAll('main button')].find(b => b.offsetParent).style.all = 'revert'")
    assert any("the browser's default button style" in p for p in page.evaluate(PROBLEMS))


def test_on_a_phone_each_rows_actions_are_on_screen_without_scrolling_a_table_sideways(
    page, live_server, demo_with_release
):
    """Rows with their own actions (a member's Remove, an instance's Open) become one card per row on a phone,
    each cell named by its column, so no action waits off screen inside a side-scrolling table."""
    log_in(page, live_server.url, "manager", "demo-manager")
    page.set_viewport_size({"width": 390, "height": 800})
    follow(page, PROJECT, within="main")
    history = page.get_by_role("link", name="Open").first
    expect(history).to_be_visible()
    box = history.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    follow_project_nav(page, "Members")
    for button in page.get_by_role("button", name=re.compile(r"^Remove ")).all():
        box = button.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    first_row = page.locator("#members tbody tr").first
    expect(first_row.locator("td").nth(2)).to_have_attribute("data-label", "Qualification")
    assert page.evaluate(
        "document.querySelector('#members').scrollWidth <= document.querySelector('#members').clientWidth"
    )


def test_on_a_phone_the_instances_and_the_dashboards_people_tables_read_without_sideways_scrolling(
    page, live_server, demo_with_release
):
    """The instances list (its Status column was cut off) and the dashboard's annotator and verifier tables (they
    scrolled inside their card) stack one card per row at 390 px, each cell named by its column."""
    log_in(page, live_server.url, "manager", "demo-manager")
    page.set_viewport_size({"width": 390, "height": 800})
    follow(page, PROJECT, within="main")
    follow_project_nav(page, "Instances")
    status = page.locator("#instance-table tbody tr").first.locator("td[data-label=Status]")
    expect(status).to_be_visible()
    box = status.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    shot(page, "layout-instances-390", full_page=True)
    follow_project_nav(page, "Dashboard")
    for table in ("#annotator-table", "#verifier-table"):
        expect(page.locator(f"{table} tbody tr").first.locator("td").nth(1)).to_have_attribute(
            "data-label", re.compile(".")
        )
        assert page.evaluate(f"(t => t.scrollWidth <= t.clientWidth)(document.querySelector('{table}'))"), table
    shot(page.locator("#annotators"), "layout-annotators-390")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def test_on_a_phone_the_endpoints_are_cards_and_the_dashboards_bar_charts_keep_legible_text(
    page, live_server, demo_with_release
):
    """The model endpoints table scrolled sideways at 390 px (its Test button off screen), and the dashboard's
    people charts were drawn 580 wide, so a phone shrank their 12-px text to 7 px. (The demo's items came validated,
    so one submission by its annotator gives the people chart a bar to draw; with none it says it has nothing.)"""
    demo_annotator = User.objects.get(username="annotator2")
    worked = Instance.objects.filter(project=demo_with_release.project).first()
    worked.events.create(actor=demo_annotator, from_status="in_refinement", to_status="submitted", version=1)
    log_in(page, live_server.url, "manager", "demo-manager")
    page.set_viewport_size({"width": 390, "height": 800})
    follow(page, PROJECT, within="main")
    follow_project_nav(page, "Model endpoints")
    test = page.locator("#endpoint-list tbody tr").first.get_by_role("button", name="Test")
    expect(test).to_be_visible()
    box = test.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    expect(page.locator("#endpoint-list tbody tr").first.locator("td").nth(2)).to_have_attribute(
        "data-label", "Base URL"
    )
    assert page.evaluate("(t => t.scrollWidth <= t.clientWidth)(document.querySelector('#endpoint-list'))")
    shot(page, "layout-endpoints-390", full_page=True)
    follow_project_nav(page, "Dashboard")
    label = page.locator("#annotators svg.bar-chart text").first
    expect(label).to_be_visible()
    assert label.bounding_box()["height"] >= 10, label.bounding_box()  # 12 px drawn at ≥ 0.8 of its size
    shot(page.locator("#annotators"), "layout-annotator-bars-390")

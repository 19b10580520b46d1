"""The page frame every role sees: the project navigation marks the page the viewer is on, and the unread-guidelines
banner is a banner (its own box) on every page, not only on the exam pages that load the qualification styles."""

from __future__ import annotations

import pytest

from annotate.qualification.guidelines import guidelines_ensure_default
from tests.browser.conftest import follow_project_nav, open_in_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BACKGROUND = "el => getComputedStyle(el).backgroundColor"


def test_the_project_navigation_marks_the_current_page(page, login, live_server, personas):
    login(page, "manager")
    open_in_project(page, "Batches")
    page.mouse.move(0, 0)  # off the navigation: a hovered link has a background of its own
    nav = page.locator("nav.project-nav")
    current = nav.locator("a[aria-current=page]")
    assert current.count() == 1 and current.inner_text() == "Batches"
    other = nav.get_by_role("link", name="Releases", exact=True)
    assert current.evaluate(BACKGROUND) != other.evaluate(BACKGROUND)
    follow_project_nav(page, "Releases")
    page.mouse.move(0, 0)
    assert nav.locator("a[aria-current=page]").inner_text() == "Releases"
    assert other.evaluate(BACKGROUND) != nav.get_by_role("link", name="Batches", exact=True).evaluate(BACKGROUND)


@pytest.mark.parametrize("where", ["Work queue", "Round two"])
def test_the_unread_guidelines_banner_is_a_box_on_the_work_pages(page, login, live_server, project, personas, where):
    guidelines_ensure_default(project=project)  # version 1, which the annotator has not opened yet
    login(page, "annotator")
    open_in_project(page, where)
    banner = page.locator(".guidelines-banner")
    assert banner.is_visible()
    assert banner.evaluate(BACKGROUND) not in ("rgba(0, 0, 0, 0)", "transparent")
    assert banner.evaluate("el => getComputedStyle(el).borderTopStyle") == "solid"


@pytest.mark.parametrize("width", [1366, 390])
def test_the_top_bar_keeps_the_viewers_name_and_links_clear_of_the_project_links(
    page, login, live_server, project, personas, width
):
    page.set_viewport_size({"width": width, "height": 844})
    login(page, "annotator")
    topbar = page.locator("header.topbar")
    boxes = [topbar.locator(selector).bounding_box() for selector in (".who", "nav a >> nth=0")]
    who, project_link = boxes
    apart = (
        who["x"] >= project_link["x"] + project_link["width"]
        or project_link["x"] >= who["x"] + who["width"]
        or who["y"] >= project_link["y"] + project_link["height"]
        or project_link["y"] >= who["y"] + who["height"]
    )
    assert apart, (width, who, project_link)
    topbar.get_by_role("link", name="Password").click()  # a click at its centre reaches it: nothing covers it
    page.wait_for_url("**/password/")
    assert page.get_by_role("heading", level=1).inner_text() == "Change your password"

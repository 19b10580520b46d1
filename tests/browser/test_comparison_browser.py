"""A researcher opens the comparison from the navigation, sees SciTaT table 5 with its Δ row and bold best, and
downloads it as CSV and LaTeX; wide tables scroll sideways inside a labelled region instead of clipping."""

from __future__ import annotations

import csv
import io

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import follow, open_in_project, shot
from tests.scoring.run_support import small_release
from tests.scoring.runs.test_paper_tables import paper_tables

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_researcher_reads_table_5_and_downloads_it_as_csv_and_latex(page, live_server, login, project, personas):
    release = small_release(project, questions=4)
    paper_tables().reproduce(release=release, actor=personas["manager"])
    page.set_viewport_size({"width": 1024, "height": 900})
    login(page, "novice")
    open_in_project(page, "Releases")
    follow(page, release.name, within="main")
    follow(page, "compare scored runs", within="main")
    table5 = page.locator("#table5")
    expect(table5.locator("h2")).to_contain_text("SciTaT table 5")
    delta_rows = table5.locator("tr.row-delta")
    expect(delta_rows).to_have_count(3)
    expect(delta_rows.first).to_contain_text("Δ")
    expect(table5.locator("tbody strong").first).to_be_visible()
    expect(page.locator("#table2")).to_contain_text("3-shot")
    region = table5.get_by_role("region", name="Models × methods × settings (SciTaT table 5) (scrolls sideways)")
    expect(region).to_be_visible()
    # Nothing sticks out of the page: a table wider than the column scrolls inside its region.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert page.evaluate("(el) => el.scrollWidth >= el.clientWidth", region.element_handle())
    shot(page, "compare", full_page=True)
    # On a narrow window table 5 is wider than the page: it scrolls inside its region, the page itself does not.
    page.set_viewport_size({"width": 560, "height": 900})
    # (app.css makes a narrow screen's grid tables scroll themselves; either way the scroller is inside the region.)
    scrolls = "(el) => [el, el.querySelector('table')].some((box) => box.scrollWidth > box.clientWidth)"
    assert page.evaluate(scrolls, region.element_handle())
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    shot(page, "compare-narrow")
    page.set_viewport_size({"width": 1024, "height": 900})

    with page.expect_download() as csv_download:
        table5.get_by_role("link", name="table5.csv").click()
    rows = list(csv.reader(io.StringIO(open(csv_download.value.path(), encoding="utf-8").read())))
    assert rows[0][:4] == ["Model", "Method", "row", "Long context EM"]
    assert sum(1 for row in rows if row[1] == "Δ") == 3
    with page.expect_download() as tex_download:
        table5.get_by_role("link", name="table5.tex (LaTeX, booktabs)").click()
    latex = open(tex_download.value.path(), encoding="utf-8").read()
    assert latex.count("\\toprule") == 1 and "\\textbf{" in latex and "$\\Delta$" in latex

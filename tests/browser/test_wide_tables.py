"""Wide tables are readable at 1366 px: a table wider than its pane scrolls inside a box that shows it does, its
header row and first column stay in view, the answer's cells are highlighted; the layout check fails without that."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotate.review.services import review_claim
from tests.annotate.review.helpers import submit
from tests.browser.conftest import shot
from tests.browser.test_layout import PROBLEMS
from tests.browser.test_review_flow import open_as
from tests.factories import ShortContextFactory, TableFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COLUMNS = 18
WIDE = [["Model", *[f"Benchmark {c}" for c in range(1, COLUMNS)]]] + [
    [name, *[f"{row}{c}.{c}" for c in range(1, COLUMNS)]] for row, name in enumerate(("Alpha", "Beta", "Gamma"), 1)
]


def _table(cells_in_html: str) -> str:
    return f"<main><section class='card' style='width:320px'>{cells_in_html}</section></main>"


def _wide_html() -> str:
    head = "".join(f"<th>{text}</th>" for text in WIDE[0])
    body = "".join("<tr>" + "".join(f"<td>{text}</td>" for text in row) + "</tr>" for row in WIDE[1:])
    return f"<table class='data'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def test_the_layout_check_fails_on_a_wide_table_that_does_not_show_it_scrolls_and_a_cut_off_placeholder(page):
    page.set_content(_table(f"<div style='overflow:auto'>{_wide_html()}</div>"))
    problems = page.evaluate(PROBLEMS)
    assert any("scrolls sideways without showing" in p for p in problems), problems
    assert any("header row scrolls away" in p for p in problems), problems
    assert any("first column scrolls away" in p for p in problems), problems
    page.set_content(_table(f"<div style='overflow:hidden'>{_wide_html()}</div>"))
    assert any("does not scroll inside a box" in p for p in page.evaluate(PROBLEMS))

    # A placeholder cut off at its box's edge (the vouch reason's, before its box was widened).
    page.set_content(
        "<main><label>Why <input name='reason' style='width:8em' placeholder='e.g. wrote the guidelines with me'>"
        "</label></main>"
    )
    assert any('placeholder "e.g. wrote the guidelines with me" is cut off' in p for p in page.evaluate(PROBLEMS))
    page.evaluate("document.querySelector('input').style.width = '30em'")
    assert page.evaluate(PROBLEMS) == []


def test_a_wide_relevant_table_in_the_review_pane_scrolls_visibly_with_header_and_first_column_kept(
    browser, live_server, project, personas, open_batch
):
    table = TableFactory(
        paper__project=project, paper__title="A paper with a wide table", number="1", caption="Eighteen columns.",
        cells=WIDE,
    )  # fmt: skip
    context = ShortContextFactory(
        paper=table.paper, paragraph__section="Results", paragraph__text="Table 1 has it all.", tables=[table]
    )
    from tests.conftest import instance_build

    instance = instance_build(project, context, batch=open_batch, draft={"question": "Draft?"})
    submitted = submit(project, personas["annotator"], instance, answer=["25.5"])  # Beta, benchmark 5
    verifier = open_as(browser, live_server, "verifier")
    verifier.set_viewport_size({"width": 1366, "height": 800})
    verifier.goto(f"{live_server.url}/p/{project.slug}/review/{submitted.pk}/")
    wrap = verifier.locator(f"#table-{table.pk}")
    assert wrap.get_attribute("data-scrolls") == "x"
    assert verifier.locator(".scroll-hint").first.is_visible()
    assert "more column" in verifier.locator(".scroll-hint").first.inner_text()
    assert verifier.locator("td.answer-cell").all_inner_texts() == ["25.5"]
    problems = [p for p in verifier.evaluate(PROBLEMS) if "table" in p]
    assert problems == []
    wrap.evaluate("box => box.scrollLeft = box.scrollWidth")  # scrolled to the far right, the first column stays
    first = verifier.locator("tbody td.first-col").first.bounding_box()
    assert first["x"] >= wrap.bounding_box()["x"] - 1
    Path("var/screenshots").mkdir(parents=True, exist_ok=True)
    shot(verifier, "review-wide-table-1366")


def test_a_tall_table_says_how_many_rows_lie_below_its_box(browser, live_server, project, personas, open_batch):
    """A table taller than its box (420 px) scrolls inside it too: the hint above says so, with the rows out of view,
    as it does for columns."""
    tall = [["Model", "Dev", "Test"]] + [[f"Model {row}", f"{row}.1", f"{row}.2"] for row in range(1, 41)]
    table = TableFactory(paper__project=project, number="2", caption="Forty rows.", cells=tall)
    context = ShortContextFactory(
        paper=table.paper, paragraph__section="Results", paragraph__text="Table 2 lists them.", tables=[table]
    )
    from tests.conftest import instance_build

    instance = instance_build(project, context, batch=open_batch, draft={"question": "Draft?"})
    submitted = submit(project, personas["annotator"], instance, answer=["3.1"])
    review_claim(instance_id=submitted.pk, user=personas["verifier"])  # the decision bar is the holder's
    verifier = open_as(browser, live_server, "verifier")
    verifier.set_viewport_size({"width": 1366, "height": 800})
    verifier.goto(f"{live_server.url}/p/{project.slug}/review/{submitted.pk}/")
    wrap = verifier.locator(f"#table-{table.pk}")
    assert wrap.get_attribute("data-scrolls") is None  # not wider than its box
    hint = verifier.locator(".scroll-hint").first.inner_text()
    assert hint.startswith("Taller than this box: scroll it down for ") and hint.endswith(" more rows ↓")
    below = int(hint.split("for ")[1].split(" ")[0])
    visible = wrap.evaluate(
        "box => [...box.querySelectorAll('tbody tr')].filter(r => r.offsetTop + r.offsetHeight <= box.clientHeight + 1)"
        ".length"
    )
    assert 0 < below and below + visible == 40
    # Scrolled to the table, its sticky first column passes under the decision bar fixed at the foot of the page,
    # never over it (the bar's own z-index cannot win against a stacking context it sits in).
    bar = verifier.locator(".decision-bar").bounding_box()
    # The table's top 150 px above the bar: its rows run on under the bar, inside the box.
    verifier.evaluate(
        "([id, barTop]) => window.scrollBy(0, document.getElementById(id).getBoundingClientRect().top - barTop + 150)",
        [f"table-{table.pk}", bar["y"]],
    )
    column = verifier.locator(f"#table-{table.pk} tbody td.first-col").first.bounding_box()
    x, y = column["x"] + column["width"] / 2, bar["y"] + bar["height"] / 2
    on_top = verifier.evaluate("([x, y]) => !!document.elementFromPoint(x, y).closest('.decision-bar')", [x, y])
    assert on_top, "a table cell is drawn over the decision bar"

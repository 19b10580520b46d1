"""A manager names the panel, calibrates a batch and sets its queue order from the batches page; the card shows
k of n and each model's share, the instance browser filters by k, and an annotator's Next gets what no model
answers first. At desktop and phone widths nothing on the card is clipped or unreachable."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from curation.panel.models import Calibration
from scoring.calibration import CALIBRATIONS
from tests.browser.conftest import open_in_project, shot, type_into
from tests.scoring.run_support import endpoint_for
from tests.scoring.test_calibration import batch, panel_server  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAYOUT_CHECK = "\n".join(
    line for line in (Path(__file__).parent / "layout_check.js").read_text().splitlines() if not line.startswith("//")
)


def test_a_manager_calibrates_a_batch_and_the_queue_serves_the_hardest_first(
    page,
    live_server,
    login,
    project,
    personas,
    batch,  # noqa: F811
    panel_server,  # noqa: F811
):
    for name in ("strong", "weak"):
        endpoint_for(project, panel_server.base_url, name=name, model=name, max_attempts=1)
    login(page, "manager")
    open_in_project(page, "Batches")
    card = page.locator("#panel")
    expect(card).to_contain_text("never calibrated")
    expect(card.get_by_role("button", name=f"Calibrate {batch.name}")).to_be_disabled()
    card.get_by_label("strong").check()
    card.get_by_label("weak").check()
    card.get_by_role("button", name="Save the panel").click()
    expect(page.locator(".messages")).to_contain_text("Panel saved.")

    page.locator("#panel").get_by_role("button", name=f"Calibrate {batch.name}").click()
    expect(page.locator(".messages")).to_contain_text("Calibration asked")
    expect(page.locator("#panel .calibration-state")).to_contain_text("Waiting for a worker")
    CALIBRATIONS.run(Calibration.objects.get().pk, worker="browser-test")  # what the scoring worker does
    # The card follows the calibration by itself while one waits or runs (no reload).
    row = page.locator(f"#panel-batches tr[data-batch='{batch.name}']")
    expect(row.locator(".k-of-n")).to_contain_text("0 of 2: 2")
    expect(row.locator(".panel-models")).to_contain_text("strong: 4 / 6 (66.7 %)")
    row.get_by_label(f"Queue order of {batch.name}").select_option("unanswered_first")
    row.get_by_role("button", name="Save").click()
    expect(page.locator(".messages")).to_contain_text("Queue order saved.")
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate(LAYOUT_CHECK) == []
        shot(page.locator("#panel"), f"panel-{width}")
    page.set_viewport_size({"width": 1366, "height": 900})

    open_in_project(page, "Instances")
    type_into(page, "input[name=panel]", "0")
    page.get_by_role("button", name="Filter").click()
    rows = page.locator("table tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("table tbody")).to_contain_text("Q4?")
    expect(page.locator("table tbody")).to_contain_text("Q5?")
    expect(page.locator("table tbody .panel-k").first).to_have_text("0 of 2")

    page.context.clear_cookies()
    login(page, "annotator")
    open_in_project(page, "Work queue")
    page.locator("#next-button").click()
    expect(page.locator("#f-question")).to_have_value("Q4?")

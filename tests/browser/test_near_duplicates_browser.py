"""A manager checks the validated questions for near-duplicates from the releases page, reads both sides, withholds
one, and sees the cut form withhold it; at desktop and phone widths nothing is clipped or unreachable."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import open_in_project, shot, type_into
from tests.curation.releases.test_near_duplicates import planted, public_tatqa  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAYOUT_CHECK = "\n".join(
    line for line in (Path(__file__).parent / "layout_check.js").read_text().splitlines() if not line.startswith("//")
)


def test_a_manager_finds_withholds_and_cuts_without_a_near_duplicate(page, live_server, login, planted):  # noqa: F811
    login(page, "manager")
    open_in_project(page, "Releases")
    section = page.locator("#near-duplicates")
    expect(section).to_contain_text("Not checked yet")
    type_into(page, "#near-duplicates input[name=threshold]", "0.85")
    section.get_by_role("button", name="Check for near-duplicates").click()
    expect(page.locator(".messages")).to_contain_text("2 near-duplicates")
    table = page.locator("#near-duplicate-table")
    row = table.locator(f"tr[data-instance='{planted['contaminated'].pk}']")
    expect(row).to_contain_text(planted["source"]["question"])
    expect(row).to_contain_text("an imported dataset: TAT-QA tatqa_dataset_dev.json")
    expect(table.locator(f"tr[data-instance='{planted['twin'].pk}']")).to_contain_text("this release")
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate(LAYOUT_CHECK) == []
        shot(page, f"near-duplicates-{width}", full_page=True)
    page.set_viewport_size({"width": 1366, "height": 900})

    row.get_by_label(f"Withhold #{planted['contaminated'].pk}").check()
    section.get_by_role("button", name="Withhold the ticked from cuts").click()
    expect(page.locator(".messages")).to_contain_text("1 near-duplicate withheld from cuts")
    expect(page.locator("#cut-withheld")).to_contain_text("1 validated instance marked as near-duplicates to withhold")

    type_into(page, "#cut-release input[name=name]", "ours")
    page.get_by_role("button", name="Cut release").click()
    expect(page.locator(".messages")).to_contain_text("4 instances frozen")
    found = "2 questions found (against TAT-QA tatqa_dataset_dev.json, this release), 1 withheld"
    expect(page.locator("body")).to_contain_text(found)

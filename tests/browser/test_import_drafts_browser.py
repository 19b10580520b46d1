"""A manager imports TAT-QA's unlabelled test questions on the Import page and reads how many came in as drafts."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import open_in_project, shot
from tests.scoring.metrics.shared_data import shared_data_dir

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_manager_imports_unlabelled_questions_and_sees_the_drafts(
    page, live_server, login, project, personas, settings
):
    # In the request, as a file under the worker threshold is (a big file's worker path: test_import_worker.py).
    settings.TATCURATE_DATASET_IMPORT_ASYNC_MIN_QUESTIONS = 5000
    path = shared_data_dir() / "tatqa" / "tatqa_dataset_test.json"
    login(page, "manager")
    open_in_project(page, "Import a dataset")
    page.get_by_label("Format").select_option("tatqa")
    page.get_by_label("File").set_input_files(str(path))
    # The import of 1,669 questions runs in this request: on a busy 2-core machine it outlasts the default 15 s.
    page.get_by_role("button", name="Import").click(timeout=60_000)
    messages = page.locator(".messages")
    expect(messages).to_contain_text("1669 questions (0 validated, 1669 as drafts to annotate) over 278 contexts")
    expect(messages).to_contain_text("open the batch to put them in the annotators' queue")
    row = page.locator("#imports tbody tr").first
    expect(row).to_contain_text("tatqa_dataset_test.json")
    expect(page.locator("#imports thead")).to_contain_text("Drafts")
    expect(row.locator("td").nth(3)).to_have_text("1669")
    shot(page, "import-drafts-1366", full_page=True)

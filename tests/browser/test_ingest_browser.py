"""A manager uploads LaTeX sources on the upload page and follows the ingestion's page: it waits for a worker,
shows the papers once the worker has read them (tables appear on the paper page), and shows the reason when a
source hits a limit, with Retry and Discard. The test plays the worker (the real bounded child, in this process)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from curation.models import Paper
from curation.papers.ingestion import INGEST_JOBS
from tests.browser.conftest import content_width, follow, open_in_project, shot
from tests.curation.papers import hostile_sources as hostile
from tests.curation.papers.ingest_helpers import PAPER, tar_gz

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def queued(monkeypatch):
    from curation.papers import tasks

    ids: list[int] = []
    # The job is sent through apply_async (job_enqueue); the test plays the worker.
    monkeypatch.setattr(tasks.paper_ingest_task, "apply_async", lambda args, queue=None: ids.extend(args))
    return ids


def upload(page, path) -> None:
    open_in_project(page, "Papers")
    follow(page, "Upload LaTeX sources")
    page.locator("#upload-files").set_input_files(str(path))
    page.get_by_role("button", name="Ingest").click()
    page.wait_for_url("**/papers/ingestions/*/")


@pytest.mark.parametrize("width", [1366, 390])
def test_an_upload_is_followed_to_its_papers(page, live_server, login, project, personas, queued, tmp_path, width):
    page.set_viewport_size({"width": width, "height": 900})
    login(page, "manager")
    upload(page, tar_gz(tmp_path / "2401.01234.tar.gz", {"src/main.tex": PAPER}))
    progress = page.locator("#ingest-progress")
    expect(progress).to_contain_text("Waiting for a worker")
    expect(progress).to_contain_text("0 of 1")
    expect(page.get_by_text("2401.01234.tar.gz")).to_be_visible()
    assert not Paper.objects.exists()  # nothing is read in the request

    INGEST_JOBS.run(queued[0], worker="test")
    results = page.locator("#upload-results")
    expect(results).to_contain_text("created", timeout=10000)  # the page refreshes itself
    expect(progress).to_contain_text("1 of 1")
    expect(progress).to_contain_text("2 tables")
    shot(page, f"ingest-done-{width}", full_page=True)
    results.get_by_role("link", name="Packed Paper").click()
    expect(page.locator("body")).to_contain_text("Main results.")
    # A table's box takes the content's width (the tables stand above the paragraphs, not in a column beside them).
    box = page.get_by_role("region", name="Table 1").bounding_box()
    assert box["width"] >= 0.9 * content_width(page), (box, content_width(page))


def test_a_source_that_hits_the_cpu_limit_shows_why_and_can_be_discarded(
    page, live_server, login, project, personas, queued, tmp_path, settings
):
    settings.TATCURATE_INGEST_CPU_S = 2
    login(page, "manager")
    upload(page, hostile.doubling_macros(tmp_path / "loop.tex"))
    INGEST_JOBS.run(queued[0], worker="test")
    error = page.locator("#ingest-error")
    expect(error).to_contain_text("loop.tex: extraction used more than 2 s of CPU time", timeout=10000)
    expect(error).to_contain_text("Nothing was stored")
    shot(page, "ingest-failed-1366", full_page=True)
    page.set_viewport_size({"width": 390, "height": 900})
    shot(page, "ingest-failed-390", full_page=True)
    error.get_by_role("button", name="Retry").click()
    expect(page.locator(".messages")).to_contain_text("queued again")
    expect(page.locator("#ingest-progress")).to_contain_text("Waiting for a worker")
    INGEST_JOBS.run(queued[-1], worker="test")
    questions: list[str] = []
    page.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.accept()))
    page.locator("#ingest-error").get_by_role("button", name="Discard").click(timeout=20000)
    expect(page.locator(".messages")).to_contain_text("discarded")
    expect(page.locator("h1")).to_contain_text("Upload papers")
    assert questions == ["Discard this upload? Its files are deleted."]
    assert not Paper.objects.exists()

"""A manager takes a release to an evaluation harness and back, from the navigation: Releases → the release →
Score a model → Download the harness tasks; then the harness's log is uploaded and opens as a run."""

from __future__ import annotations

import json
import zipfile

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import follow, open_in_project, shot
from tests.scoring.run_support import small_release

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_manager_downloads_the_harness_tasks_and_uploads_the_harness_log_as_a_run(
    page, live_server, login, project, personas, tmp_path
):
    release = small_release(project, questions=2)
    login(page, "manager")
    open_in_project(page, "Releases")
    follow(page, release.name, within="main")
    follow(page, "Score a model", within="main")
    section = page.locator("#harness-tasks")
    expect(section).to_contain_text("Inspect AI")
    shot(page, "release-score-harness", full_page=True)
    with page.expect_download() as download:
        section.get_by_role("link", name="Download the harness tasks (zip)").click()
    tasks = tmp_path / "tasks.zip"
    download.value.save_as(tasks)
    samples = [json.loads(line) for line in zipfile.ZipFile(tasks).read("data/short-cot.jsonl").splitlines()]
    assert len(samples) == 2 and "tatcurate_task.py" in zipfile.ZipFile(tasks).namelist()
    # What `inspect eval --log-format json` writes for these samples (the harness itself runs in the model test).
    log = tmp_path / "run.json"
    log.write_text(json.dumps({"samples": [
        {"id": s["id"], "epoch": 1, "output": {"completion": f"Reason: read it. Answer: {s['target'][0]}"},
         "metadata": {"method": "cot", "setting": "short"}} for s in samples
    ]}))  # fmt: skip
    upload = page.locator("#upload-predictions")
    upload.locator("select[name=format]").select_option("inspect")
    upload.locator("input[name=file]").set_input_files(str(log))
    upload.get_by_role("button", name="Score file").click()
    page.wait_for_load_state()
    expect(page.locator("h1")).to_contain_text("run.json")
    expect(page.locator("body")).to_contain_text("reported method cot")  # read from the log's samples
    shot(page, "harness-run", full_page=True)

"""Where bubblewrap cannot start, a PoT run's page tells the manager its programs were not run, and why."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from scoring import sandbox
from scoring.runs.chunks import chunk_process
from scoring.runs.creation import run_create
from scoring.runs.lifecycle import run_start
from tests.browser.conftest import follow, open_in_project, shot
from tests.scoring.run_support import endpoint_for, small_release
from tests.support import fault_server as fs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_run_page_says_programs_were_not_run(page, live_server, login, project, personas, monkeypatch, tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: fake)
    release = small_release(project, questions=2)
    with fs.FaultServer(default=fs.ok("```python\nans = 1\n```")) as server:
        endpoint = endpoint_for(project, server.base_url, name="local endpoint")
        run = run_create(release=release, actor=personas["manager"], method="pot", endpoint=endpoint)
        run_start(run=run, actor=personas["manager"], dispatch=False)
        for chunk_id in run.chunks.values_list("pk", flat=True):
            chunk_process(chunk_id=chunk_id)
        assert server.chat_request_count == 0
    login(page, "manager")
    open_in_project(page, "Releases")
    follow(page, release.name, within="main")
    page.get_by_role("link", name="Score a model").first.click()
    page.get_by_role("link", name=f"#{run.pk}", exact=True).first.click()
    expect(page.locator("#run-isolation")).to_contain_text("unavailable")
    expect(page.locator("#isolation-refused")).to_contain_text("were not run")
    shot(page, "run-refused", full_page=True)
    page.locator("#predictions tbody a").first.click()
    expect(page.locator("body")).to_contain_text("No permissions to create new namespace")

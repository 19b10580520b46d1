"""A manager cuts a big release from the releases page and watches its progress until it becomes a release."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from curation.releases.models import ReleaseCut
from curation.releases.services.jobs import RELEASE_CUTS
from tests.browser.conftest import open_in_project, shot, type_into
from tests.curation.releases.test_release_scale import validated_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_big_cut_shows_its_progress_then_its_release(
    page, live_server, login, project, personas, settings, monkeypatch
):
    from curation.releases import tasks

    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 6
    queued: list[int] = []
    # The cut is sent through apply_async (job_enqueue); the test plays the worker below.
    monkeypatch.setattr(tasks.release_cut_task, "apply_async", lambda args, queue=None: queued.extend(args))
    batch = validated_world(project, papers=2, per_paper=3)
    login(page, "manager")
    open_in_project(page, "Releases")
    type_into(page, "#cut-release input[name=name]", "big")
    page.get_by_label(batch.name).check()
    page.get_by_role("button", name="Cut release").click()
    expect(page.locator(".messages")).to_contain_text("Release big is being cut on a worker: 6 instances")
    expect(page.locator("#release-cuts")).to_contain_text("Waiting for a worker")
    expect(page.locator("#release-cuts")).to_contain_text("0 of 6 frozen")

    ReleaseCut.objects.filter(pk=queued[0]).update(state=ReleaseCut.State.RUNNING, items_done=4)
    expect(page.locator("#release-cuts")).to_contain_text("4 of 6 frozen", timeout=10000)  # the page polls
    expect(page.locator("#release-cuts")).to_contain_text("Being frozen")
    shot(page, "release-cut-progress-1366", full_page=True)

    RELEASE_CUTS.run(queued[0])
    expect(page.locator("#release-cuts")).to_have_count(0, timeout=10000)
    expect(page.locator("#release-list")).to_contain_text("big")
    page.locator("#release-list").get_by_role("link", name="big").click()
    expect(page.locator("h1")).to_contain_text("big")


def test_the_demo_manager_sees_the_exam_pool_withheld_and_includes_it_by_the_box(page, live_server, login):
    from io import StringIO

    from django.core.management import call_command

    call_command("demo", "--json", stdout=StringIO())
    login(page, "manager", "demo-manager")
    open_in_project(page, "Releases", project="Demo: sparse adapters paper")
    withheld = page.locator("#cut-withheld")
    expect(withheld).to_contain_text("15 validated instances in the qualification exam's gold pool")
    type_into(page, "#cut-release input[name=name]", "demo")
    type_into(page, "#cut-release textarea[name=description]", "The demo tables")
    type_into(page, "#cut-release input[name=license]", "CC-BY-4.0")
    page.get_by_role("button", name="Cut release").click()
    expect(page.locator("#cut-release #cut-refusal")).to_contain_text(
        "Every validated instance of those batches is withheld"
    )
    # The refused form keeps what was asked; the manager ticks the box, having read what it does.
    expect(page.locator("#cut-release input[name=name]")).to_have_value("demo")
    expect(page.locator("#cut-release textarea[name=description]")).to_have_value("The demo tables")
    expect(page.locator("#cut-release input[name=license]")).to_have_value("CC-BY-4.0")
    expect(page.locator("#include-withheld-hint")).to_contain_text("Their answers become public with the release")
    page.get_by_label("Include the 15 withheld instances").check()
    shot(page, "release-withheld-1366", full_page=True)
    page.get_by_role("button", name="Cut release").click()
    expect(page.locator(".messages")).to_contain_text("Release demo-v1 cut: 15 instances frozen.")

"""A verifier starts a scoring run from the release page, watches it finish, drills into a wrong prediction and
tags its error type; a real Celery worker does the work against a local fault-free endpoint."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from scoring.models import ErrorTag, ScoringRun
from tests.browser.conftest import content_width, follow, open_in_project, shot, type_into
from tests.scoring.run_support import endpoint_for, small_release
from tests.support import fault_server as fs
from tests.support.workers import celery_worker

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_start_a_run_from_the_release_page_then_tag_a_wrong_prediction(
    page, live_server, login, project, personas, settings
):
    release = small_release(project, questions=3)
    with fs.FaultServer(default=fs.ok("Reason: the 2019 column is the largest. Answer: 2019")) as server:
        endpoint_for(project, server.base_url, name="local fault-free endpoint")
        with celery_worker() as worker:
            settings.TATCURATE_SCORING_QUEUE = worker["queue"]
            login(page, "verifier")
            open_in_project(page, "Releases")
            follow(page, release.name, within="main")
            page.click("text=Score a model")
            page.select_option("select[name=method]", "cot")
            type_into(page, "input[name=limit]", "3")
            page.click("#start-run-button")
            expect(page.locator("h1")).to_contain_text("Scoring run")
            expect(page.locator("#progress-text")).to_contain_text("Completed", timeout=60000)
            # The bar spans the content, and is full at the end.
            bar = page.get_by_role("progressbar", name=re.compile(r"Progress of scoring run \d+"))
            expect(bar).to_have_attribute("aria-valuenow", "100.0")
            assert bar.bounding_box()["width"] >= 0.9 * content_width(page)
            assert bar.locator("div").bounding_box()["width"] >= bar.bounding_box()["width"] - 1
            expect(page.locator("#figures")).to_contain_text("EM (short-form")
            # The release holds TAT-QA questions: its headline is TAT-QA's own metric, not the SciTaT-style EM.
            expect(page.locator("#headline-title")).to_contain_text("Headline: TAT-QA's own metric")
            expect(page.locator("#headline")).to_contain_text("TAT-QA EM (with scale)")
            expect(page.locator("#headline")).not_to_contain_text("short-form")
            shot(page, "run-headline-1366", full_page=True)
    run = ScoringRun.objects.get(method="cot")
    assert run.status == "completed" and run.predictions.count() == 3
    page.click("text=wrong only")
    page.locator("#predictions tbody a").first.click()
    expect(page.locator("#gold")).to_be_visible()
    page.check("input[name=kind][value=calculation]")
    type_into(page, "input[name=note]", "added the wrong rows")
    page.click("#save-tag")
    expect(page.locator("#tagging")).to_contain_text("verifier: Calculation")
    assert ErrorTag.objects.get(tagged_by=personas["verifier"]).kind == "calculation"
    page.click(f"text=run {run.pk}")
    expect(page.locator("#error-types")).to_contain_text(re.compile("Calculation"))

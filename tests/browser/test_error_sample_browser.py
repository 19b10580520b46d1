"""A manager draws SciTaT §4.4's error sample on a finished run's page, opens a sampled prediction, tags it, and
reads the distribution with its sample size; the start-run form shows the scoring modes."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from scoring.models import ErrorSample
from scoring.runs.uploads import upload_run_create
from tests.browser.conftest import follow, shot, type_into
from tests.scoring.run_support import small_release

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_draw_the_error_sample_tag_a_sampled_prediction_and_read_the_distribution(
    page, live_server, login, project, personas
):
    release = small_release(project, questions=6)
    content = "\n".join(
        json.dumps({"uid": uid, "answer": ["surely wrong"]}) for uid in release.items.values_list("uid", flat=True)
    ).encode()
    run = upload_run_create(release=release, actor=None, format="jsonl", name="wrong.jsonl", content=content)
    login(page, "manager")
    page.goto(f"{live_server.url}/p/{project.slug}/releases/{release.pk}/score/")
    expect(page.locator("#scoring-modes")).to_contain_text("Answer extraction")
    expect(page.locator("#paper-bertscore-unavailable")).to_contain_text("TATCURATE_BERT_BASE_UNCASED_DIR")
    shot(page, "start-run-form", full_page=True)
    follow(page, f"#{run.pk}", within="#runs")
    expect(page.locator("#error-analysis")).to_contain_text("No sample drawn yet")
    type_into(page, "#error-sample-form input[name=seed]", "7")
    page.click("#draw-error-sample")
    expect(page.locator("#error-sample-facts")).to_contain_text("Seed 7, up to 25 per answer form")
    expect(page.locator("#error-analysis")).to_contain_text("0 tagged")
    page.click("#error-sample-list summary")
    page.locator("#error-sample-list a").first.click()
    page.check("input[name=kind][value=grounding]")
    page.click("#save-tag")
    expect(page.locator("#tagging")).to_contain_text("manager: Grounding")
    page.click(f"text=run {run.pk}")
    analysis = page.locator("#error-analysis")
    expect(analysis).to_contain_text("1 tagged")
    expect(analysis.locator("table").first).to_contain_text("Grounding")
    expect(page.locator(".facts")).to_contain_text("use the predicted scale")
    shot(page, "run-error-sample", full_page=True)
    assert ErrorSample.objects.get(run=run).seed == 7

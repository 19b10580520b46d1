"""Issue 15's "Done when", on the demo: a person refines the draft on Table 1's paragraph and marks that paragraph as
wrongly extracted; after round one, round two and a cut, the SciTaT, TAT-QA, JSONL, Parquet and CSV downloads hold
Table 1 as a rectangular grid with "Avg." over its own column, the struck paragraph is in none of them, the TAT-QA
question carries its answer type; and the prompt a scoring run recorded for the item shows the same rectangular table
without that paragraph. Refining, reviewing, cutting and downloading are clicks; the round-two reviewer qualifies
and the scoring run starts through the services and the score command."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from io import StringIO
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

from annotate.qualification.services import attempt_start, attempt_submit
from curation.models import Instance, Project
from curation.releases.models import Release
from curation.states import Status
from scoring.runs.models import Prediction
from tests.browser.conftest import choose_scale, follow, follow_project_nav, person, type_into
from tests.curation.releases.test_release_fidelity import HEADER, PROMPT_HEADER, table_one_grids
from tests.scoring.run_support import endpoint_for
from tests.support import fault_server as fs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PROJECT = "Demo: sparse adapters paper"
LAYOUT_CHECK = "\n".join(  # a JS function (its leading comment lines dropped): what a person cannot reach
    line for line in (Path(__file__).parent / "layout_check.js").read_text().splitlines() if not line.startswith("//")
)
FORMATS = ("scitat", "tatqa", "jsonl", "parquet", "csv")


def qualify_by_exam(project: Project, username: str) -> None:
    """The demo's unqualified annotator passes the exam with the gold answers (the exam service scores it)."""
    user = get_user_model().objects.get(username=username)
    attempt = attempt_start(project=project, user=user)
    answers = {str(pk): Instance.objects.get(pk=pk).answer for pk in attempt.item_ids}
    assert attempt_submit(attempt_id=attempt.pk, user=user, answers=answers).passed


def data_text(path: str, fmt: str) -> str:
    """The data file of a downloaded release zip, as text (Parquet rows as JSON)."""
    with zipfile.ZipFile(path) as bundle:
        name = next(n for n in bundle.namelist() if n.startswith("data/"))
        data = bundle.read(name)
    if fmt == "parquet":
        return json.dumps(pq.read_table(io.BytesIO(data)).to_pylist(), ensure_ascii=False)
    return data.decode()


def test_refined_item_with_a_struck_paragraph_is_faithful_in_every_export_and_prompt(
    browser, live_server, settings, tmp_path
):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # export builds and the scoring run inside the request
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("demo", "--json", stdout=StringIO())
    project = Project.objects.get(slug="demo")

    # Refine: annotator2 (qualified) takes the next draft, the one on Table 1's paragraph, strikes the paragraph.
    annotator = person(browser, live_server, "annotator2", project=PROJECT, accept_downloads=True)
    follow_project_nav(annotator, "Work queue")
    annotator.click("#next-button")
    annotator.wait_for_url(re.compile(r"/work/\d+/$"))
    refined = Instance.objects.get(pk=int(annotator.url.rstrip("/").rsplit("/", 1)[1]))
    expect(annotator.locator("main")).to_contain_text("tab:main")
    paragraph = refined.context.paragraph
    struck = annotator.locator(f'.paragraph[data-paragraph-id="{paragraph.pk}"]')
    expect(struck).to_contain_text(paragraph.text[:40])
    struck.get_by_label("wrongly extracted").click()
    expect(struck).to_have_class(re.compile(r"\bexcluded\b"))
    annotator.click("#f-question")
    annotator.keyboard.press("End")
    annotator.keyboard.type(" (Table 1)")
    expect(annotator.get_by_label("Arithmetic")).to_be_checked()  # the suggested answer type, kept
    choose_scale(annotator)
    annotator.keyboard.press("Control+Enter")
    annotator.wait_for_url(lambda url: f"/work/{refined.pk}/" not in url)
    refined.refresh_from_db()
    assert refined.status == Status.SUBMITTED and refined.answer_type == "arithmetic"
    assert list(refined.excluded_paragraphs.values_list("pk", flat=True)) == [paragraph.pk]

    # Round one: the verifier approves it from the review queue.
    verifier = person(browser, live_server, "verifier", project=PROJECT, accept_downloads=True)
    follow_project_nav(verifier, "Review queue")
    verifier.click("#review-next")
    verifier.wait_for_url(re.compile(rf"/review/{refined.pk}/$"))
    verifier.click("#approve-button")
    verifier.wait_for_url(lambda url: f"/review/{refined.pk}/" not in url)

    # Round two: the other annotator passes the exam, then confirms it.
    qualify_by_exam(project, "annotator")
    second = person(browser, live_server, "annotator", project=PROJECT, accept_downloads=True)
    follow_project_nav(second, "Round two")
    second.click("#round2-next")
    second.wait_for_url(re.compile(rf"/round2/{refined.pk}/$"))
    second.click("#confirm-button")
    second.wait_for_url(lambda url: f"/round2/{refined.pk}/" not in url)
    assert Instance.objects.get(pk=refined.pk).status == Status.VALIDATED

    # Cut: the manager ticks the item's batch only (other demo items legitimately use the same paragraph).
    manager = person(browser, live_server, "manager", project=PROJECT, accept_downloads=True)
    follow_project_nav(manager, "Releases")
    type_into(manager, "#cut-release input[name=name]", "faithful")
    manager.locator("#cut-release").get_by_label(f"{refined.batch.name} (1 validated)").click()
    manager.get_by_role("button", name="Cut release").click()
    expect(manager.locator(".messages")).to_contain_text("Release faithful-v1 cut: 1 instance frozen.")
    release = Release.objects.get(name="faithful")
    assert list(release.items.values_list("instance_id", flat=True)) == [refined.pk]

    # Download every format and read it as its consumer would.
    follow(manager, "Downloads")
    texts = {}
    for fmt in FORMATS:
        row = manager.locator(f'tr[data-format="{fmt}"]')
        row.get_by_role("button", name="Build").click()
        with manager.expect_download() as download:
            row.get_by_role("link", name="Download").click()
        texts[fmt] = data_text(download.value.path(), fmt)
    for fmt, text in texts.items():
        grids = table_one_grids(fmt, text)
        assert grids, f"no Table 1 in the {fmt} download"
        for grid in grids:
            assert {len(row) for row in grid} == {7}, fmt
            assert grid[0] == HEADER and grid[1] == ["", "", "Wolof", "Faroese", "Tagalog", "Yoruba", ""], fmt
            lora = next(row for row in grid if row[0] == "LoRA")
            assert (lora[2], lora[6]) == ("76.2", "73.4"), fmt  # Wolof and Avg. under their own headers
        assert paragraph.text[:60] not in text, f"the struck paragraph is in the {fmt} download"
        assert refined.question in text
    (document,) = json.loads(texts["tatqa"])
    assert [q["answer_type"] for q in document["questions"]] == ["arithmetic"]
    assert next(csv.DictReader(io.StringIO(texts["csv"])))["answer_type"] == "arithmetic"

    # Score: a run over the release records the prompt it sent; the drill-down page shows it.
    with fs.FaultServer(default=fs.ok("Answer: 1.1")) as server:
        endpoint_for(project, server.base_url, name="fault")
        call_command(
            "score", "--release", release.name, "--project", project.slug, "--endpoint", "fault",
            "--method", "direct", "--setting", "short", "--inline", "--json", stdout=StringIO(),
        )  # fmt: skip
    prediction = Prediction.objects.get(run__release=release)
    follow_project_nav(manager, "Releases")
    follow(manager, "faithful", within="main")
    follow(manager, "Score a model")
    manager.locator("#runs tbody a").first.click()
    expect(manager.locator("h1")).to_contain_text("Scoring run")
    manager.locator("#predictions tbody a").first.click()
    expect(manager.locator("h1")).to_contain_text("Prediction 1")
    prompt = manager.locator("#prompt").inner_text()
    assert prediction.prompt and PROMPT_HEADER in prompt
    assert "| LoRA | 8.1 | 76.2 | 78.8 | 71.0 | 67.7 | 73.4 |" in prompt
    assert paragraph.text[:60] not in prompt
    manager.set_viewport_size({"width": 390, "height": 900})  # the prompt fits a phone: no sideways scrolling
    assert manager.evaluate(LAYOUT_CHECK) == []

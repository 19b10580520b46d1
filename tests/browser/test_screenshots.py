"""The screenshots of the role guides (docs/guides/*.md): each role walks its pages on the demo project, by clicks from
the project navigation, and every page it uses is saved as a 1366-px PNG under TATCURATE_DOCS_SCREENSHOTS (run by
`bash scripts/screenshots`, which points it at docs/img/). Without that variable the test is skipped."""

from __future__ import annotations

import json
import os
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from curation.models import Batch, Instance, Project
from curation.releases.services.cut import release_cut
from curation.states import Status
from tests.browser.conftest import choose_scale, follow, follow_project_nav, person

OUT = os.environ.get("TATCURATE_DOCS_SCREENSHOTS", "")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not OUT, reason="set TATCURATE_DOCS_SCREENSHOTS (bash scripts/screenshots) to take them"),
]

PROJECT = "Demo: sparse adapters paper"
WIDTH, HEIGHT = 1366, 860


def shot(page, name: str) -> None:
    """Save what the window shows as docs/img/NAME.png, reduced to 256 colours (the pages are flat UI)."""
    from PIL import Image

    page.wait_for_load_state("networkidle")
    raw = Path(OUT) / f"{name}.raw.png"
    page.screenshot(path=str(raw))
    with Image.open(raw) as image:
        image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(
            Path(OUT) / f"{name}.png", optimize=True
        )
    raw.unlink()


def nav_shots(page, pages: dict[str, str]) -> None:
    for link, name in pages.items():
        follow_project_nav(page, link)
        shot(page, name)


def test_every_page_a_role_uses_is_photographed_for_its_guide(browser, live_server, tmp_path):
    call_command("demo", "--json", stdout=StringIO())
    project = Project.objects.get(slug="demo")
    batch = Batch.objects.get(project=project, name="Validated demo items")
    release = release_cut(project=project, actor=None, name="demo", batch_ids=[batch.pk], include_withheld=True)

    # The manager: the project page and every page of the navigation.
    manager = person(browser, live_server, "manager", viewport={"width": WIDTH, "height": HEIGHT})
    follow(manager, PROJECT, within="main")
    shot(manager, "manager-project")
    nav_shots(
        manager,
        {
            "Members": "manager-members",
            "Batches": "manager-batches",
            "Drafting": "manager-drafting",
            "Model endpoints": "manager-endpoints",
            "Prompt templates": "manager-prompts",
            "Exam settings": "manager-exam-settings",
            "Guidelines": "manager-guidelines",
            "Instances": "manager-instances",
            "Import a dataset": "manager-import-dataset",
            "Import drafts": "manager-import-drafts",
            "Webhooks": "manager-webhooks",
            "Export work in progress": "manager-work-export",
        },
    )
    follow_project_nav(manager, "Papers")
    shot(manager, "manager-papers")
    follow(manager, "Upload LaTeX sources")
    shot(manager, "manager-upload")
    follow_project_nav(manager, "Papers")
    manager.locator("#paper-list a").first.click()
    manager.wait_for_load_state()
    shot(manager, "manager-paper")

    # A new annotator: home, guidelines, the exam, its result.
    annotator = person(browser, live_server, "annotator", viewport={"width": WIDTH, "height": HEIGHT})
    shot(annotator, "annotator-home")
    follow(annotator, PROJECT, within="main")
    nav_shots(annotator, {"Guidelines": "annotator-guidelines", "Releases": "annotator-releases"})
    follow_project_nav(annotator, "Qualification exam")
    annotator.click("#start-exam")
    annotator.wait_for_url(re.compile(r"/qualification/attempts/\d+/$"))
    shot(annotator, "annotator-exam")
    names = annotator.locator("input[name^=answer-]").evaluate_all("els => [...new Set(els.map(e => e.name))]")
    annotator.locator(f"input[name={names[0]}]").click()
    for name in names:  # the answers a qualified person knows from reading the paper
        for index, item in enumerate(Instance.objects.get(pk=int(name.split("-")[1])).answer):
            if index:
                annotator.keyboard.press("Enter")
            annotator.keyboard.type(item)
        annotator.keyboard.press("Control+Enter")
    annotator.once("dialog", lambda dialog: dialog.accept())
    annotator.click("#submit-exam")
    expect(annotator.locator("#verdict")).to_contain_text("Passed")
    shot(annotator, "annotator-exam-result")
    follow(annotator, "claim drafts")

    # The now qualified annotator refines a draft.
    follow_project_nav(annotator, "Work queue")
    shot(annotator, "annotator-queue")
    annotator.click("#next-button")
    annotator.wait_for_url(re.compile(r"/work/\d+/$"))
    refined = int(annotator.url.rstrip("/").rsplit("/", 1)[1])
    shot(annotator, "annotator-workspace")
    annotator.click("#f-question")
    annotator.keyboard.press("End")
    annotator.keyboard.type(" (as reported)")
    choose_scale(annotator)
    annotator.keyboard.press("Control+Enter")
    annotator.wait_for_url(lambda url: f"/work/{refined}/" not in url)
    assert Instance.objects.get(pk=refined).status == Status.SUBMITTED
    nav_shots(annotator, {"Instances": "annotator-instances"})

    # The verifier: home, papers, discussions, the review queue and a round-one review.
    verifier = person(browser, live_server, "verifier", viewport={"width": WIDTH, "height": HEIGHT})
    shot(verifier, "verifier-home")
    follow(verifier, PROJECT, within="main")
    nav_shots(
        verifier,
        {"Papers": "verifier-papers", "Instances": "verifier-instances", "Discussions": "verifier-discussions"},
    )
    follow_project_nav(verifier, "Review queue")
    shot(verifier, "verifier-review-queue")
    verifier.click("#review-next")
    verifier.wait_for_url(re.compile(rf"/review/{refined}/$"))
    shot(verifier, "verifier-review")
    verifier.click("#approve-button")
    verifier.wait_for_url(lambda url: f"/review/{refined}/" not in url)

    # A second qualified annotator confirms it in round two.
    second = person(browser, live_server, "annotator2", viewport={"width": WIDTH, "height": HEIGHT})
    follow(second, PROJECT, within="main")
    follow_project_nav(second, "Round two")
    shot(second, "annotator-round2-queue")
    second.click("#round2-next")
    second.wait_for_url(re.compile(rf"/round2/{refined}/$"))
    shot(second, "annotator-round2")
    second.click("#confirm-button")
    second.wait_for_url(lambda url: f"/round2/{refined}/" not in url)
    assert Instance.objects.get(pk=refined).status == Status.VALIDATED

    # The manager's dashboard, discussions and releases, now with work in them.
    nav_shots(manager, {"Dashboard": "manager-dashboard", "Discussions": "manager-discussions"})
    follow_project_nav(manager, "Releases")
    shot(manager, "manager-releases")
    follow(manager, release.name, within="main")
    shot(manager, "manager-release")

    # The researcher's pages: score a model, a run scored from an uploaded file, the comparison.
    follow(manager, "Score a model")
    shot(manager, "researcher-score")
    predictions = tmp_path / "predictions.jsonl"
    items = list(release.items.order_by("position"))
    predictions.write_text(
        "".join(
            json.dumps({"uid": item.uid, "answer": item.data["answer"] if position % 3 else ["42"]}) + "\n"
            for position, item in enumerate(items)
        )
    )
    upload = manager.locator("#upload-predictions")
    upload.locator("select[name=format]").select_option("jsonl")
    upload.locator("input[name=file]").set_input_files(str(predictions))
    upload.get_by_role("button", name="Score file").click()
    expect(manager.locator("h1")).to_contain_text("Scoring run")
    expect(manager.locator("#figures")).to_contain_text("EM")
    shot(manager, "researcher-run")
    manager.locator("#figures").scroll_into_view_if_needed()
    manager.evaluate("document.querySelector('#figures').closest('section, .card, main').scrollIntoView()")
    shot(manager, "researcher-run-figures")
    manager.locator("#predictions a[href*='/scoring/predictions/']").first.click()
    manager.wait_for_url(re.compile(r"/scoring/predictions/\d+/$"))
    shot(manager, "researcher-prediction")
    manager.goto(f"{live_server.url}/p/{project.slug}/releases/{release.pk}/compare/")
    shot(manager, "researcher-comparison")

    taken = sorted(p.stem for p in Path(OUT).glob("*.png"))
    assert {"annotator-workspace", "verifier-review", "manager-dashboard", "researcher-run"} <= set(taken), taken

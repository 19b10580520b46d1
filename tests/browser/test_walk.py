"""The README pipeline end to end, by clicks and keys only, from the home page: a manager uploads a paper (.tex),
batches it and drafts it with the template drafter; a new annotator passes the exam and refines a draft; a verifier
approves it (round one); a second annotator confirms it (round two); the manager cuts a release, exports it, and
scores a predictions file made from the export. Only the first page of each person is a typed URL."""

from __future__ import annotations

import io
import json
import re
import zipfile
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from curation.models import Instance, Paper
from curation.releases.models import Release
from curation.states import Status
from scoring.models import ScoringRun
from tests.browser.conftest import choose_scale, follow, follow_project_nav, person, type_into

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PROJECT = "Demo: sparse adapters paper"

WALK_PAPER = r"""\documentclass{article}
\title{Walking Through Tables}
\begin{document}
\section{Results}
Table~\ref{tab:walk} reports accuracy and size for three models; the large model is the most accurate.

Per million parameters, the small model of Table~\ref{tab:walk} gains the most accuracy.

Table~\ref{tab:walk} also shows that accuracy grows by about six points from each model to the next.
\begin{table}
\caption{Accuracy (\%) and parameters (M) of three models.}\label{tab:walk}
\begin{tabular}{lrr}
\toprule
Model & Accuracy & Parameters \\
\midrule
Small & 71.2 & 60 \\
Base & 78.5 & 220 \\
Large & 83.9 & 770 \\
\bottomrule
\end{tabular}
\end{table}
\end{document}
"""


def test_the_readme_pipeline_by_clicks_and_keys(browser, live_server, tmp_path, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # drafting runs and exports inside the request: no worker needed
    call_command("demo", "--json", stdout=StringIO())
    paper_file = tmp_path / "walk.tex"
    paper_file.write_text(WALK_PAPER)

    # 1-3. The manager makes a batch, uploads the paper into it, types its contexts, opens it and drafts it.
    manager = person(browser, live_server, "manager", project=PROJECT, accept_downloads=True)
    follow_project_nav(manager, "Batches")
    type_into(manager, "input[name=name]", "Walk batch")
    manager.get_by_role("button", name="Create").click()
    expect(manager.locator(".messages")).to_contain_text("Batch created.")
    follow_project_nav(manager, "Papers")
    follow(manager, "Upload LaTeX sources")
    manager.set_input_files("#upload-files", str(paper_file))
    manager.locator("select[name=batch]").select_option(label="Walk batch")
    manager.get_by_role("button", name="Ingest").click()
    expect(manager.locator("#upload-results")).to_contain_text("created")
    paper = Paper.objects.get(title="Walking Through Tables")
    assert paper.contexts.filter(batch__name="Walk batch").exists()

    follow_project_nav(manager, "Papers")
    manager.locator("#assign-panel select[name=batch]").select_option(label="every context of batch “Walk batch”")
    manager.get_by_role("button", name="Assign reasoning types").click()
    assert not paper.contexts.filter(kind="short", reasoning_type__isnull=True).exists()

    follow_project_nav(manager, "Batches")
    manager.locator('tr[data-batch="Walk batch"]').get_by_role("button", name="Open").click()
    expect(manager.locator('tr[data-batch="Walk batch"] .batch-state')).to_contain_text("open")

    follow_project_nav(manager, "Drafting")
    manager.locator("#new-run select[name=batch]").select_option(label="Walk batch (Open)")
    manager.get_by_label("Templates: answers computed by tool programs (no model)").click()
    manager.get_by_role("button", name="Start drafting").click()
    expect(manager.locator("#run-status")).to_contain_text("Completed")
    drafts = Instance.objects.filter(context__paper=paper, status=Status.DRAFTED)
    assert drafts.exists() and all(d.draft.get("drafter") == "template" and d.draft.get("template_id") for d in drafts)

    # 4. The new annotator reads the exam page, takes the exam with the keyboard and passes.
    annotator = person(browser, live_server, "annotator", project=PROJECT, accept_downloads=True)
    follow_project_nav(annotator, "Qualification exam")
    annotator.click("#start-exam")
    annotator.wait_for_url(re.compile(r"/qualification/attempts/\d+/$"))
    names = annotator.locator("input[name^=answer-]").evaluate_all("els => [...new Set(els.map(e => e.name))]")
    annotator.locator(f"input[name={names[0]}]").click()
    for name in names:  # the answers a qualified person knows from reading the paper
        for index, item in enumerate(Instance.objects.get(pk=int(name.split("-")[1])).answer):
            if index:
                annotator.keyboard.press("Enter")  # Enter in an item adds the next one
            annotator.keyboard.type(item)
        annotator.keyboard.press("Control+Enter")
    annotator.once("dialog", lambda dialog: dialog.accept())
    annotator.click("#submit-exam")
    expect(annotator.locator("#verdict")).to_contain_text("Passed")
    follow(annotator, "claim drafts")

    # 5. Refine: the queue hands out a draft; the annotator sharpens the question and submits with Ctrl+Enter.
    follow_project_nav(annotator, "Work queue")
    annotator.click("#next-button")
    annotator.wait_for_url(re.compile(r"/work/\d+/$"))
    refined = int(annotator.url.rstrip("/").rsplit("/", 1)[1])
    annotator.click("#f-question")
    annotator.keyboard.press("End")
    annotator.keyboard.type(" (as reported)")
    choose_scale(annotator)
    annotator.keyboard.press("Control+Enter")
    annotator.wait_for_url(lambda url: f"/work/{refined}/" not in url)
    assert Instance.objects.get(pk=refined).status == Status.SUBMITTED

    # 6. Round one: the verifier takes the next review and approves it.
    verifier = person(browser, live_server, "verifier", project=PROJECT, accept_downloads=True)
    follow_project_nav(verifier, "Review queue")
    verifier.click("#review-next")
    verifier.wait_for_url(re.compile(rf"/review/{refined}/$"))
    verifier.click("#approve-button")
    verifier.wait_for_url(lambda url: f"/review/{refined}/" not in url)
    assert Instance.objects.get(pk=refined).status == Status.ROUND2_REVIEW

    # Round two: another qualified annotator confirms it.
    second = person(browser, live_server, "annotator2", project=PROJECT, accept_downloads=True)
    follow_project_nav(second, "Round two")
    second.click("#round2-next")
    second.wait_for_url(re.compile(rf"/round2/{refined}/$"))
    second.click("#confirm-button")
    second.wait_for_url(lambda url: f"/round2/{refined}/" not in url)
    assert Instance.objects.get(pk=refined).status == Status.VALIDATED

    # 7. Release: the manager ticks the batches that have validated work and cuts "walk".
    follow_project_nav(manager, "Releases")
    type_into(manager, "#cut-release input[name=name]", "walk")
    for box in manager.locator("#cut-release input[name=batch_ids]:not([disabled])").all():
        box.click()
    manager.get_by_role("button", name="Cut release").click()
    expect(manager.locator(".messages")).to_contain_text("Release walk-v1 cut")
    release = Release.objects.get(name="walk")
    assert release.items.filter(instance_id=refined).exists()

    # 8. Export: build the JSONL download and save it.
    follow(manager, "Downloads")
    manager.locator('tr[data-format="jsonl"]').get_by_role("button", name="Build").click()
    with manager.expect_download() as download:
        manager.locator('tr[data-format="jsonl"]').get_by_role("link", name="Download").click()
    archive = zipfile.ZipFile(io.BytesIO(open(download.value.path(), "rb").read()))
    data = next(name for name in archive.namelist() if name.endswith(".jsonl"))
    gold = [json.loads(line) for line in archive.read(data).decode().splitlines() if line.strip()]
    assert {row["uid"] for row in gold} == set(release.items.values_list("uid", flat=True))

    # 9. Score a predictions file (here: the gold answers themselves) uploaded on the release's scoring page.
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"uid": r["uid"], "answer": r["answer"]}) + "\n" for r in gold))
    follow(manager, "walk v1", within="main h1")
    follow(manager, "Score a model")
    upload = manager.locator("#upload-predictions")
    upload.locator("select[name=format]").select_option("jsonl")
    upload.locator("input[name=file]").set_input_files(str(predictions))
    upload.get_by_role("button", name="Score file").click()
    expect(manager.locator("h1")).to_contain_text("Scoring run")
    expect(manager.locator("#figures")).to_contain_text("EM")
    run = ScoringRun.objects.get(release=release)
    assert run.status == "completed" and run.predictions.count() == release.item_count
    assert run.predictions.filter(is_correct=True).count() == release.item_count

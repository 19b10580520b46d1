"""Day one of a new team, by clicks from the navigation only: from an empty database (no demo, no import) an
operator creates a project and the accounts of a manager, a verifier and two annotators; the manager vouches for
the annotators (the project has no gold for an exam), ingests a paper with a wide table, drafts it with templates;
an annotator refines, the lone verifier gives the review back and takes it again, approves; the other annotator
confirms in round two; the manager cuts a release. Each page passes the layout check at 1366 and 390 px (and is
kept as a screenshot when TATCURATE_SCREENSHOTS names a folder)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from curation.models import Instance
from curation.releases.models import Release
from curation.states import Status
from tests.browser.conftest import choose_scale, follow, follow_project_nav, person, shot, type_into
from tests.browser.test_layout import PROBLEMS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PROJECT = "Day one"
COLUMNS = ("Model", "MMLU", "GSM8K", "HumanEval", "ARC-C", "HellaSwag", "TruthfulQA", "WinoGrande", "DROP", "BBH")
ROWS = (("Small", 41.2), ("Base", 55.8), ("Large", 67.3))
PAPER = (
    r"""\documentclass{article}
\title{Day One: Wide Tables}
\begin{document}
\section{Results}
Table~\ref{tab:wide} reports nine benchmarks for three models; the large model leads on every one.

The small model trails the base model on most benchmarks of Table~\ref{tab:wide}, by about one point.

Averaged over the nine benchmarks of Table~\ref{tab:wide}, the gap between the large and the small model is widest.

We count in Table~\ref{tab:wide} how many benchmarks each model wins, and by how much.
\begin{table}
\caption{Scores (\%) of three models on nine benchmarks.}\label{tab:wide}
\begin{tabular}{lrrrrrrrrr}
\toprule
"""
    + " & ".join(COLUMNS)
    + r""" \\
\midrule
"""
    + "".join(
        " & ".join([name, *(f"{base + i * 1.1:.1f}" for i in range(len(COLUMNS) - 1))]) + r" \\" + "\n"
        for name, base in ROWS
    )
    + r"""\bottomrule
\end{tabular}
\end{table}
\end{document}
"""
)


def shoot(page, name: str) -> list[str]:
    """Screenshots at 1366 and 390 px, each after the layout check; the check's problems, named."""
    problems = []
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 900})
        problems += [f"{name} at {width} px: {p}" for p in page.evaluate(PROBLEMS)]
        shot(page, f"{name}-{width}", full_page=True)
    page.set_viewport_size({"width": 1366, "height": 900})
    return problems


def test_day_one_from_an_empty_database_to_a_release(browser, live_server, tmp_path, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # ingestion, drafting and the cut run inside the request
    get_user_model().objects.create_superuser("operator", "", "operator-pass")  # manage.py createsuperuser
    problems: list[str] = []

    # 1. The operator creates the project and the team's accounts (each password shown once).
    operator = person(browser, live_server, "operator", "operator-pass")
    follow(operator, "New project", within="main")
    type_into(operator, "input[name=name]", "Day one")
    operator.get_by_role("button", name="Create").click()
    expect(operator.locator("h1")).to_contain_text("Members")
    passwords = {}
    for username, role in (("lead", "manager"), ("vera", "verifier"), ("ann", "annotator"), ("bob", "annotator")):
        type_into(operator, "#new_username", username)
        operator.locator("#new_role").select_option(role)
        operator.get_by_role("button", name="Create and add").click()
        passwords[username] = operator.locator("#initial-password").inner_text()

    # 2. The manager vouches for both annotators (no gold yet) and sees the checklist.
    lead = person(browser, live_server, "lead", passwords["lead"], project=PROJECT)
    expect(lead.locator("#first-release-checklist")).to_be_visible()
    problems += shoot(lead, "01-project-checklist")
    follow_project_nav(lead, "Exam settings")
    expect(lead.locator("#ways-to-start")).to_be_visible()
    for username in ("ann", "bob"):
        lead.locator("#vouch-user").select_option(label=username)
        type_into(lead, "#vouch-reason", "Co-wrote the guidelines")
        lead.click("#vouch-submit")
        expect(lead.locator(f'tr[data-vouch="{username}"]')).to_be_visible()
    problems += shoot(lead, "02-exam-settings-vouched")

    # 3. Batch, paper, reasoning types, open, draft with templates.
    follow_project_nav(lead, "Batches")
    type_into(lead, "input[name=name]", "Batch 1")
    lead.get_by_role("button", name="Create").click()
    paper_file = tmp_path / "wide.tex"
    paper_file.write_text(PAPER)
    follow_project_nav(lead, "Papers")
    follow(lead, "Upload LaTeX sources")
    lead.set_input_files("#upload-files", str(paper_file))
    lead.locator("select[name=batch]").select_option(label="Batch 1")
    lead.get_by_role("button", name="Ingest").click()
    expect(lead.locator("#upload-results")).to_contain_text("created")
    follow_project_nav(lead, "Papers")
    lead.locator("#assign-panel select[name=batch]").select_option(label="every context of batch “Batch 1”")
    lead.get_by_role("button", name="Assign reasoning types").click()
    follow_project_nav(lead, "Batches")
    lead.locator('tr[data-batch="Batch 1"]').get_by_role("button", name="Open").click()
    follow_project_nav(lead, "Drafting")
    lead.locator("#new-run select[name=batch]").select_option(label="Batch 1 (Open)")
    lead.get_by_label("Templates: answers computed by tool programs (no model)").click()
    lead.get_by_role("button", name="Start drafting").click()
    expect(lead.locator("#run-status")).to_contain_text("Completed")
    assert Instance.objects.filter(status=Status.DRAFTED).exists()

    # 4. Refine: ann takes a draft from the queue and submits it.
    ann = person(browser, live_server, "ann", passwords["ann"], project=PROJECT)
    follow_project_nav(ann, "Work queue")
    ann.click("#next-button")
    ann.wait_for_url(re.compile(r"/work/\d+/$"))
    refined = int(ann.url.rstrip("/").rsplit("/", 1)[1])
    problems += shoot(ann, "03-workspace-wide-table")
    ann.click("#f-question")
    ann.keyboard.press("End")
    ann.keyboard.type(" (as reported)")
    choose_scale(ann)
    ann.keyboard.press("Control+Enter")
    ann.wait_for_url(lambda url: f"/work/{refined}/" not in url)
    assert Instance.objects.get(pk=refined).status == Status.SUBMITTED

    # 5. Round one with one verifier: take it, give it back, take it again from Next, approve.
    vera = person(browser, live_server, "vera", passwords["vera"], project=PROJECT)
    follow_project_nav(vera, "Review queue")
    vera.click("#review-next")
    vera.wait_for_url(re.compile(rf"/review/{refined}/$"))
    problems += shoot(vera, "04-review-wide-table")
    vera.click("#release-button")
    expect(vera.locator("#round1-waiting")).to_have_text("1")
    vera.click("#review-next")
    vera.wait_for_url(re.compile(rf"/review/{refined}/$"))
    vera.click("#approve-button")
    vera.wait_for_url(lambda url: f"/review/{refined}/" not in url)
    assert Instance.objects.get(pk=refined).status == Status.ROUND2_REVIEW

    # 6. Round two: bob confirms.
    bob = person(browser, live_server, "bob", passwords["bob"], project=PROJECT)
    follow_project_nav(bob, "Round two")
    bob.click("#round2-next")
    bob.wait_for_url(re.compile(rf"/round2/{refined}/$"))
    problems += shoot(bob, "05-round-two")
    bob.click("#confirm-button")
    bob.wait_for_url(lambda url: f"/round2/{refined}/" not in url)
    assert Instance.objects.get(pk=refined).status == Status.VALIDATED

    # 7. Release.
    follow_project_nav(lead, "Releases")
    type_into(lead, "#cut-release input[name=name]", "day-one")
    for box in lead.locator("#cut-release input[name=batch_ids]:not([disabled])").all():
        box.click()
    lead.get_by_role("button", name="Cut release").click()
    expect(lead.locator(".messages")).to_contain_text("Release day-one-v1 cut")
    assert Release.objects.get(name="day-one").items.filter(instance_id=refined).exists()
    follow(lead, "Day one", within="header.topbar nav")
    problems += shoot(lead, "06-project-checklist-done")
    assert lead.locator('#first-release-checklist [data-step="release"]').get_attribute("data-done") == "yes"
    assert not problems, "\n".join(problems)

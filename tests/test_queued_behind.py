"""A started run that no worker has picked up says "queued behind N" (runs ahead on its queue) on its pages and
in the API, instead of "Running"; once its work begins it shows its status again."""

from __future__ import annotations

import pytest
from django.test import Client

from curation.drafting.models import DraftingItem
from curation.drafting.selectors import run_queued_behind as drafting_queued_behind
from curation.drafting.services.runs import run_create as drafting_run_create
from curation.drafting.services.runs import run_start as drafting_run_start
from curation.models import Batch
from curation.queues import waiting_label
from scoring.models import RunChunk
from scoring.runs.creation import run_create
from scoring.runs.lifecycle import run_start
from scoring.runs.progress import run_progress
from tests.curation.drafting.conftest import endpoint_on, make_contexts
from tests.scoring.run_support import endpoint_for, small_release

pytestmark = pytest.mark.django_db


def test_waiting_label_names_the_runs_ahead():
    assert waiting_label(None) == ""
    assert waiting_label(0) == "Queued, waiting for a worker"
    assert waiting_label(1) == "Queued behind 1 run"
    assert waiting_label(3) == "Queued behind 3 runs"


def _scoring_runs(project, manager, queues: list[str]):
    release = small_release(project, questions=2)
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    runs = []
    for queue in queues:
        run = run_create(release=release, actor=manager, method="cot", endpoint=endpoint, chunk_size=1)
        runs.append(run_start(run=run, actor=manager, queue=queue))
    return runs


def test_scoring_run_counts_the_unfinished_runs_ahead_on_its_own_queue(project, personas):
    first, second, third, elsewhere = _scoring_runs(project, personas["manager"], ["q", "q", "q", "other"])
    assert [run_progress(run)["queued_behind"] for run in (first, second, third, elsewhere)] == [0, 1, 2, 0]
    # The first run's worker picks up a chunk: it shows "Running" again; the others still wait behind it.
    RunChunk.objects.filter(pk=first.chunks.first().pk).update(status=RunChunk.Status.RUNNING)
    assert run_progress(first)["queued_behind"] is None and run_progress(first)["waiting"] == ""
    assert run_progress(third)["waiting"] == "Queued behind 2 runs"
    # A finished run is no longer ahead of anyone.
    first.chunks.update(status=RunChunk.Status.DONE)
    assert run_progress(third)["queued_behind"] == 1


def test_scoring_run_page_and_api_say_queued_behind_rather_than_running(project, personas, api_client_for):
    _, second = _scoring_runs(project, personas["manager"], ["q", "q"])
    browser = Client()
    browser.force_login(personas["manager"])
    page = browser.get(f"/p/{project.slug}/scoring/runs/{second.pk}/").content.decode()
    assert "Queued behind 1 run" in page and "Running ·" not in page
    fragment = browser.get(f"/p/{project.slug}/scoring/runs/{second.pk}/progress/").content.decode()
    assert "Queued behind 1 run" in fragment
    runs_list = browser.get(f"/p/{project.slug}/releases/{second.release_id}/score/").content.decode()
    assert "Queued behind 1 run" in runs_list and "Queued, waiting for a worker" in runs_list
    progress = api_client_for(personas["manager"]).get(f"/api/scoring-runs/{second.pk}/").json()["progress"]
    assert progress["status"] == "running"
    assert progress["queued_behind"] == 1 and progress["waiting"] == "Queued behind 1 run"


def test_drafting_runs_say_queued_behind_on_the_drafting_pages_and_api(project, personas, api_client_for):
    manager = personas["manager"]
    batch = Batch.objects.create(project=project, name="Queued")
    make_contexts(project, batch, 2)
    endpoint = endpoint_on(project, "http://127.0.0.1:9/v1")
    runs = []
    for queue in ("d", "d", "other"):
        run = drafting_run_create(project=project, actor=manager, kind="llm", batch=batch, endpoint=endpoint,
                                  options={"redraft": True})  # fmt: skip
        runs.append(drafting_run_start(run_id=run.pk, actor=manager, queue=queue))
    first, second, _elsewhere = runs
    assert [drafting_queued_behind(run) for run in runs] == [0, 1, 0]

    browser = Client()
    browser.force_login(manager)
    assert "Queued behind 1 run" in browser.get(f"/p/{project.slug}/drafting/runs/{second.pk}/").content.decode()
    assert "Queued behind 1 run" in browser.get(f"/p/{project.slug}/drafting/").content.decode()
    body = api_client_for(manager).get(f"/api/drafting-runs/{second.pk}/").json()
    assert body["queued_behind"] == 1 and body["waiting"] == "Queued behind 1 run"

    # Once an item of the first run is being drafted, the first shows its status and the second still waits.
    DraftingItem.objects.filter(pk=first.items.first().pk).update(status=DraftingItem.Status.RUNNING)
    assert drafting_queued_behind(first) is None and drafting_queued_behind(second) == 1
    assert api_client_for(manager).get(f"/api/drafting-runs/{first.pk}/").json()["waiting"] == ""

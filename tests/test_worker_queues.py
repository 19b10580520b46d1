"""Separate queues on real worker processes: a scoring run started during a long drafting run makes progress at
once, and a run waiting behind another on its queue says so."""

from __future__ import annotations

import threading

import pytest
from django.test import Client

from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.selectors import run_queued_behind
from curation.drafting.services.runs import run_cancel, run_create
from curation.drafting.services.runs import run_start as drafting_run_start
from scoring.models import ScoringRun
from scoring.runs.creation import run_create as scoring_run_create
from scoring.runs.lifecycle import run_start as scoring_run_start
from tests.curation.drafting.conftest import endpoint_on, make_contexts, scripted_reply
from tests.factories import BatchFactory
from tests.scoring.run_support import endpoint_for, small_release
from tests.support import fault_server as fs
from tests.support.workers import celery_worker, private_queue, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_scoring_makes_progress_while_a_long_drafting_run_holds_the_drafting_worker(project, personas, settings):
    manager = personas["manager"]
    release = small_release(project, questions=3)
    batch = BatchFactory(project=project, name="Long drafting")  # after the release's import batch
    make_contexts(project, batch, 3)
    held = threading.Event()
    gate = threading.Event()

    def slow_model(request: dict) -> fs.Fault:
        # Every drafting request hangs until the test lets go: the drafting run stays in progress throughout.
        held.set()
        gate.wait(120)
        return scripted_reply(request)

    with (
        fs.FaultServer(responder=slow_model) as drafting_server,
        fs.FaultServer(responder=lambda request: fs.ok("Reason: by year. Answer: 2019")) as scoring_server,
        celery_worker(queue=private_queue("test-drafting")) as drafting_worker,
        celery_worker(queue=private_queue("test-scoring")) as scoring_worker,
    ):
        # The queues come from the settings, as in scripts/start: one worker per queue, concurrency 1.
        settings.TATCURATE_DRAFTING_QUEUE = drafting_worker["queue"]
        settings.TATCURATE_SCORING_QUEUE = scoring_worker["queue"]
        started: list[int] = []
        try:
            drafting_endpoint = endpoint_on(project, drafting_server.base_url, name="Slow model", timeout_s=150)
            drafting = run_create(
                project=project, actor=manager, kind="llm", batch=batch, endpoint=drafting_endpoint,
                options={"chunk_size": 1},
            )  # fmt: skip
            drafting_run_start(run_id=drafting.pk, actor=manager)
            started.append(drafting.pk)
            assert held.wait(60), "the drafting worker never called the model"

            # A second drafting run waits behind the first on the drafting queue, and its pages say so.
            second = run_create(
                project=project, actor=manager, kind="llm", batch=batch, endpoint=drafting_endpoint,
                options={"redraft": True},
            )  # fmt: skip
            drafting_run_start(run_id=second.pk, actor=manager)
            started.append(second.pk)
            assert run_queued_behind(DraftingRun.objects.get(pk=second.pk)) == 1
            browser = Client()
            browser.force_login(manager)
            page = browser.get(f"/p/{project.slug}/drafting/runs/{second.pk}/").content.decode()
            assert "Queued behind 1 run" in page

            scoring = scoring_run_create(
                release=release, actor=manager, method="cot", endpoint=endpoint_for(project, scoring_server.base_url),
                chunk_size=1, use_cache=False,
            )  # fmt: skip
            scoring_run_start(run=scoring, actor=manager)
            assert ScoringRun.objects.get(pk=scoring.pk).queue == scoring_worker["queue"]
            wait_for(
                lambda: ScoringRun.objects.get(pk=scoring.pk).status == "completed",
                timeout=90,
                what="the scoring run to complete during the drafting run",
            )
            # Scoring finished while the drafting model still had not answered a single request.
            assert not gate.is_set()
            assert DraftingRun.objects.get(pk=drafting.pk).is_active
            assert not DraftingItem.objects.filter(run=drafting, status=DraftingItem.Status.DRAFTED).exists()
            assert scoring_server.chat_request_count == 3
        finally:
            for run_id in started:
                run_cancel(run_id=run_id, actor=manager)
            gate.set()

"""Drafting runs on a real Celery worker: the real local model end to end, and a worker killed mid-run."""

from __future__ import annotations

import os
import signal
import time

import pytest

from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.services.jobs import DRAFTING_ITEMS
from curation.drafting.services.runs import run_create, run_start
from curation.endpoints import local_model
from curation.endpoints.models import ModelEndpoint
from curation.models import Batch, Instance
from curation.states import Status
from tests.curation.drafting.conftest import endpoint_on, make_contexts, scripted_reply
from tests.support.fault_server import FaultServer
from tests.support.local_model import local_model_url
from tests.support.workers import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

FINISHED = (DraftingRun.Status.COMPLETED, DraftingRun.Status.FAILED, DraftingRun.Status.CANCELLED)


def _finished(run_id: int) -> DraftingRun | None:
    run = DraftingRun.objects.get(pk=run_id)
    return run if run.status in FINISHED else None


@pytest.mark.model
def test_real_local_model_drafts_a_batch_through_a_worker(project, personas):
    base_url = local_model_url()
    endpoint = ModelEndpoint.objects.create(
        name="Local SmolLM2 (test)", base_url=base_url, model=local_model.MODEL_NAME, timeout_s=120, max_attempts=2,
        concurrency_limit=1, generation_params={"temperature": 0.0, "max_tokens": 96},
    )  # fmt: skip
    batch = Batch.objects.create(project=project, name="Real model batch")
    contexts = make_contexts(project, batch, 2)

    with celery_worker() as worker:
        run = run_create(project=project, actor=personas["manager"], kind="llm", batch=batch, endpoint=endpoint)
        run_start(run_id=run.pk, actor=personas["manager"], queue=worker["queue"])
        run = wait_for(lambda: _finished(run.pk), timeout=240, what="the drafting run to finish")

    assert run.status == DraftingRun.Status.COMPLETED, run.error
    # Each context ends one of two ways, both through the worker: a draft that keeps whatever the tiny model wrote,
    # or — since SmolLM2-135M often copies the prompt's example — a rejection naming the example it repeated.
    items = {item.context_id: item for item in run.items.all()}
    assert sorted(items) == sorted(context.pk for context in contexts)
    drafted = {i.context_id: i for i in Instance.objects.filter(project=project)}
    for context in contexts:
        item = items[context.pk]
        assert item.raw_output["question"].strip()
        if context.pk not in drafted:
            rejected = item.raw_output["rejected"][0]
            assert item.error.startswith("rejected: ") and rejected["matched"] in run.question_template.text
            continue
        instance = drafted[context.pk]
        assert instance.status == Status.DRAFTED and instance.batch_id == batch.pk
        assert instance.draft["raw"]["question"].strip()
        assert instance.draft["model"] and instance.draft["endpoint"]["name"] == "Local SmolLM2 (test)"
        assert instance.draft["params"]["max_tokens"] == 96
        assert instance.question.strip()
        assert instance.draft.get("parse_error") or instance.draft["raw"].get("rationale_answer", "").strip()
    assert {item.worker for item in run.items.all()} == {worker["hostname"]}


def test_killed_worker_mid_run_is_finished_by_a_restarted_worker_without_duplicates(project, personas):
    batch = Batch.objects.create(project=project, name="Kill batch")
    contexts = make_contexts(project, batch, 6)
    with FaultServer(responder=scripted_reply, latency_s=0.4) as server:
        endpoint = endpoint_on(project, server.base_url, timeout_s=10)
        run = run_create(
            project=project, actor=personas["manager"], kind="llm", batch=batch, endpoint=endpoint,
            options={"chunk_size": 3},
        )  # fmt: skip
        with celery_worker() as first:
            queue = first["queue"]
            run_start(run_id=run.pk, actor=personas["manager"], queue=queue)
            wait_for(
                lambda: run.items.filter(status=DraftingItem.Status.DRAFTED).exists(),
                timeout=60,
                what="a first drafted item",
            )
            os.killpg(first["process"].pid, signal.SIGKILL)
            first["process"].wait()
        drafted_before = run.items.filter(status=DraftingItem.Status.DRAFTED).count()
        assert drafted_before < len(contexts)

        with celery_worker(queue=queue):
            run = wait_for(lambda: _finished(run.pk), timeout=120, what="the restarted worker to finish the run")

    assert run.status == DraftingRun.Status.COMPLETED, run.error
    for context in contexts:
        assert Instance.objects.filter(context=context).count() == 1
    assert run.items.filter(status=DraftingItem.Status.DRAFTED).count() == len(contexts)


def test_a_vanished_worker_is_reaped_and_its_chunk_finished_by_a_differently_named_worker(project, personas):
    batch = Batch.objects.create(project=project, name="Vanished batch")
    contexts = make_contexts(project, batch, 6)
    with FaultServer(responder=scripted_reply, latency_s=0.4) as server:
        endpoint = endpoint_on(project, server.base_url, timeout_s=10)
        run = run_create(
            project=project, actor=personas["manager"], kind="llm", batch=batch, endpoint=endpoint,
            options={"chunk_size": 6},
        )  # fmt: skip
        with celery_worker() as first:
            queue = first["queue"]
            run_start(run_id=run.pk, actor=personas["manager"], queue=queue)
            wait_for(
                lambda: run.items.filter(status=DraftingItem.Status.DRAFTED).exists(),
                timeout=60,
                what="a first drafted item",
            )
            os.killpg(first["process"].pid, signal.SIGKILL)
            first["process"].wait()
        assert run.items.filter(status=DraftingItem.Status.DRAFTED).count() < len(contexts)
        assert DRAFTING_ITEMS.reap(stall_s=60) == 0  # the dead worker's heartbeat is still fresh: nothing is reaped yet
        time.sleep(2.5)
        # The replacement has another name, so it resumes nothing at start-up; only the reaper gets the chunk going.
        with celery_worker(queue=queue, name="replacement") as second:
            time.sleep(1.0)
            assert DraftingRun.objects.get(pk=run.pk).status == DraftingRun.Status.RUNNING
            assert DRAFTING_ITEMS.reap(stall_s=2.0) >= 1
            run = wait_for(lambda: _finished(run.pk), timeout=120, what="the replacement to finish the run")

    assert run.status == DraftingRun.Status.COMPLETED, run.error
    for context in contexts:
        assert Instance.objects.filter(context=context).count() == 1
    assert run.items.filter(status=DraftingItem.Status.DRAFTED).count() == len(contexts)
    assert run.items.filter(worker=second["hostname"]).exists()
    assert DRAFTING_ITEMS.reap(stall_s=2.0) == 0  # done items are never reaped again

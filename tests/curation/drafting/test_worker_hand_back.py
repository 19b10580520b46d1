"""Issue 19.4: a worker that shuts down hands back the drafting items it holds at once (Celery's worker_shutdown,
curation/tasks.py), so another worker takes them over without waiting for the stall reaper."""

from __future__ import annotations

import os
import signal

import pytest

from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.services.runs import run_create, run_start
from curation.models import Instance
from tests.curation.drafting.conftest import endpoint_on, make_contexts, scripted_reply
from tests.support.fault_server import FaultServer
from tests.support.workers import celery_worker, handed_back, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_worker_stopped_mid_item_hands_its_drafting_items_back_at_once(project, personas, drafting_batch):
    contexts = make_contexts(project, drafting_batch, 2)
    # A threshold of minutes: only the worker's own hand-back can free the item within this test.
    slow_reaper = {"TATCURATE_JOB_HEARTBEAT_S": "60"}
    with FaultServer(responder=scripted_reply, latency_s=2.0) as server:
        endpoint = endpoint_on(project, server.base_url, timeout_s=10.0)
        run = run_create(
            project=project, actor=personas["manager"], kind="llm", batch=drafting_batch, endpoint=endpoint
        )
        # prefork: a cold shutdown terminates the child running the task, then the worker itself shuts down.
        with celery_worker(env=slow_reaper, concurrency=2) as first:
            queue = first["queue"]
            run_start(run_id=run.pk, actor=personas["manager"], queue=queue)
            # Both items held (two lanes, or two pool children): an item the worker claimed only after the hand-back
            # would be handed back by its later passes (curation/tasks.py), which this test's kill cuts short.
            wait_for(
                lambda: run.items.filter(status="running", worker=first["hostname"]).count() == len(contexts),
                timeout=60,
                what="the first worker to hold every item",
            )
            os.killpg(first["process"].pid, signal.SIGQUIT)  # cold shutdown: the item in progress is abandoned
            # Handed back as the signal arrives (curation/tasks.py), before Celery stops the pool: under load that
            # stop can hang for good (billiard 4.3.2's pool.stop(), about one stop in five), and the worker with it.
            # Each item handed back with its message sent again, before the worker is killed on leaving this block.
            held = run.items.filter(worker=first["hostname"], status="running")
            wait_for(
                lambda: not held.exists() and handed_back(first, "drafting items") >= len(contexts),
                timeout=30,
                what="the stopped worker to hand its items back",
            )
        assert DraftingRun.objects.get(pk=run.pk).status == "running"
        with celery_worker(queue=queue, name="replacement", env=slow_reaper):
            wait_for(
                lambda: DraftingRun.objects.get(pk=run.pk).status == "completed",
                timeout=90,
                what="the replacement to finish the run",
            )
        requests = server.chat_request_count
    items = DraftingItem.objects.filter(run=run)
    assert set(items.values_list("status", flat=True)) == {"drafted"}
    assert Instance.objects.filter(project=project).count() == len(contexts)  # each context drafted once
    # Two calls a context, and at most what the items in flight at the stop had asked (two calls each) asked again:
    # a chunk drafts its contexts in parallel lanes, so here both may have been in flight.
    assert 2 * len(contexts) <= requests <= 2 * len(contexts) + 2 * len(contexts)

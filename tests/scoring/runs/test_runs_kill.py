"""`kill -9` of a worker's whole process group in the middle of a run; a new worker and the reaper finish it."""

from __future__ import annotations

import os
import signal
import time

import pytest

from scoring.models import Prediction, RunChunk, ScoringRun
from scoring.runs.chunks import SCORING_CHUNKS
from scoring.runs.creation import run_create
from scoring.runs.lifecycle import run_start
from tests.scoring.run_support import endpoint_for, small_release
from tests.support import fault_server as fs
from tests.support.workers import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_killed_worker_loses_only_its_in_flight_requests_and_each_item_is_scored_once(project, personas):
    release = small_release(project, documents=2, questions=6)
    with fs.FaultServer(latency_s=1.0, default=fs.ok("Answer: 2019")) as server:
        endpoint = endpoint_for(project, server.base_url, concurrency_limit=2)
        run = run_create(
            release=release,
            actor=personas["manager"],
            method="direct",
            endpoint=endpoint,
            chunk_size=3,
            use_cache=False,
        )
        with celery_worker() as first:
            queue = first["queue"]
            run_start(run=run, actor=personas["manager"], queue=queue)
            wait_for(lambda: Prediction.objects.filter(run=run).count() >= 4, timeout=60, what="a few predictions")
            os.killpg(first["process"].pid, signal.SIGKILL)
            first["process"].wait()
        killed_at = Prediction.objects.filter(run=run).count()
        assert killed_at < 12, "the run finished before the kill"
        assert ScoringRun.objects.get(pk=run.pk).status == "running"
        time.sleep(3.0)  # longer than the reaper's stall threshold below: the dead worker's chunk looks stalled
        assert SCORING_CHUNKS.reap(stall_s=2.0) >= 1
        with celery_worker(queue=queue):
            wait_for(
                lambda: ScoringRun.objects.get(pk=run.pk).status == "completed", timeout=90, what="the run to finish"
            )
        requests = server.chat_request_count
    predictions = Prediction.objects.filter(run=run)
    assert predictions.count() == 12 == release.item_count
    assert sorted(predictions.values_list("position", flat=True)) == list(range(12))
    assert set(predictions.values_list("status", flat=True)) == {"scored"}
    # At most the requests in flight at the kill (the concurrency limit) were asked twice.
    assert 12 <= requests <= 12 + endpoint.concurrency_limit
    assert RunChunk.objects.filter(run=run, deliveries__gte=2).exists()
    assert not RunChunk.objects.filter(run=run).exclude(status="done").exists()

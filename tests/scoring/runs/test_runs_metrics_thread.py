"""A scoring chunk scores its answers in a thread of its own: metrics (or loading BERTScore's weights) that take
long never hold back the chunk's model requests, and every answer is still scored and saved once."""

from __future__ import annotations

import time

import pytest

from scoring.models import Prediction, RunChunk
from scoring.runs import chunks
from scoring.runs.creation import run_create
from scoring.runs.lifecycle import run_start
from tests.scoring.run_support import endpoint_for, small_release
from tests.support import fault_server as fs

pytestmark = pytest.mark.django_db(transaction=True)


def test_slow_metrics_never_hold_back_the_requests_of_a_chunk(project, personas, monkeypatch):
    release = small_release(project, documents=2, questions=6)
    items = release.item_count
    with fs.FaultServer(latency_s=0.05, default=fs.ok("Answer: 2019")) as server:
        endpoint = endpoint_for(project, server.base_url, concurrency_limit=1)  # 2 request threads
        run = run_create(
            release=release, actor=personas["manager"], method="direct", endpoint=endpoint, use_cache=False,
            chunk_size=items,
        )  # fmt: skip
        run_start(run=run, actor=personas["manager"], dispatch=False)
        item_metrics = chunks.result_metrics.item_metrics
        asked_when_scored: list[int] = []

        def slow_metrics(*args, **kwargs):
            # Each item's metrics wait until the endpoint has been asked for every item (at most 20 s): were they
            # computed in the request threads, those 2 threads would wait here and nothing more would be asked.
            deadline = time.monotonic() + 20
            while server.chat_request_count < items and time.monotonic() < deadline:
                time.sleep(0.02)
            asked_when_scored.append(server.chat_request_count)
            return item_metrics(*args, **kwargs)

        monkeypatch.setattr(chunks.result_metrics, "item_metrics", slow_metrics)
        outcome = chunks.chunk_process(chunk_id=RunChunk.objects.get(run=run).pk, worker="scoring@metrics")
    assert outcome == "done"
    assert items > 2 and asked_when_scored[0] == items
    assert Prediction.objects.filter(run=run, status="scored").count() == items
    assert server.chat_request_count == items  # each item asked once

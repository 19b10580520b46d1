"""Issue 19.4: the Redis that holds the endpoint's shared semaphore stops for ~5 s in the middle of a run. The
outage is ridden out (retried with backoff, curation/transient.py), never recorded as an item's failure: every item
is asked once and scored once, and the run completes. The Redis is the test's own server on its own port."""

from __future__ import annotations

import threading
import time

import pytest

from curation.endpoints import limits
from scoring.models import Prediction, RunChunk, ScoringRun
from scoring.runs.chunks import run_work
from scoring.runs.creation import run_create
from scoring.runs.lifecycle import run_start
from tests.scoring.run_support import endpoint_for, small_release
from tests.support import fault_server as fs
from tests.support.private_services import PrivateRedis, free_port, redis_available

pytestmark = [
    pytest.mark.skipif(not redis_available(), reason="needs redis-server"),
    pytest.mark.django_db(transaction=True),
]
OUTAGE_S = 5.0


def test_a_five_second_redis_outage_fails_no_item_and_the_run_completes(project, personas, settings, tmp_path):
    redis = PrivateRedis(free_port(), tmp_path)
    redis.start()
    settings.REDIS_URL = redis.url
    release = small_release(project, documents=3, questions=6)
    outage: dict[str, float] = {}
    try:
        with fs.FaultServer(latency_s=0.4, default=fs.ok("Answer: 2019")) as server:
            endpoint = endpoint_for(project, server.base_url, concurrency_limit=2)
            run = run_create(
                release=release, actor=personas["manager"], method="direct", endpoint=endpoint, use_cache=False
            )
            run_start(run=run, actor=personas["manager"], dispatch=False)

            def interrupt() -> None:
                while server.chat_request_count < 3:
                    time.sleep(0.05)
                outage["at"] = server.chat_request_count
                redis.stop()
                time.sleep(OUTAGE_S)
                outage["asked_during"] = server.chat_request_count - outage["at"]
                redis.start()

            interrupter = threading.Thread(target=interrupt)
            interrupter.start()
            for chunk_id in RunChunk.objects.filter(run=run).order_by("index").values_list("pk", flat=True):
                run_work(chunk_id=chunk_id, worker="test")
            interrupter.join()
            requests = server.chat_request_count
    finally:
        interrupter_done = locals().get("interrupter")
        if interrupter_done is not None:
            interrupter_done.join()
        redis.stop()
        limits._limiters.clear()  # the limiters and their Redis clients
    items = release.item_count
    assert outage["at"] < items, "the run finished before the outage"
    assert outage["asked_during"] <= 2  # at most the requests already holding a slot went out meanwhile
    predictions = Prediction.objects.filter(run=run)
    assert predictions.count() == items
    assert set(predictions.values_list("status", flat=True)) == {"scored"}, list(
        predictions.exclude(status="scored").values_list("error", flat=True)
    )
    assert requests == items  # every item asked exactly once
    assert ScoringRun.objects.get(pk=run.pk).status == "completed"

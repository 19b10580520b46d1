"""Run mechanics without a worker: claims, redelivery, pause hand-back, retry of failed items, the reaper."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from scoring.models import Prediction, RunChunk, ScoringRun
from scoring.runs import chunks as run_chunks
from scoring.runs import creation as run_creation
from scoring.runs import lifecycle as run_lifecycle
from scoring.runs import progress as runs_progress
from scoring.runs.chunks import SCORING_CHUNKS
from tests.scoring.run_support import endpoint_for, small_release
from tests.support import fault_server as fs

pytestmark = pytest.mark.django_db


@pytest.fixture
def started(project, personas, sent):
    release = small_release(project, questions=4)
    server = fs.FaultServer(default=fs.ok("Answer: 2019")).start()
    endpoint = endpoint_for(project, server.base_url, max_attempts=1)
    run = run_creation.run_create(
        release=release, actor=personas["manager"], method="direct", endpoint=endpoint, chunk_size=2, use_cache=False
    )
    run_lifecycle.run_start(run=run, actor=personas["manager"])
    yield {"run": run, "server": server}
    server.stop()


def test_a_redelivered_task_for_a_done_chunk_exits_quietly(started):
    chunk = started["run"].chunks.get(index=0)
    assert run_chunks.chunk_process(chunk_id=chunk.pk) == "done"
    assert started["server"].requests[0]["max_tokens"] == 32
    assert run_chunks.chunk_process(chunk_id=chunk.pk) == "skipped"
    assert started["server"].chat_request_count == 2
    assert Prediction.objects.filter(run=started["run"]).count() == 2


def test_a_chunk_held_by_a_live_worker_is_not_taken_by_a_second_delivery(started):
    chunk = started["run"].chunks.get(index=0)
    RunChunk.objects.filter(pk=chunk.pk).update(status="running", claim_token="other", heartbeat_at=timezone.now())
    assert run_chunks.chunk_process(chunk_id=chunk.pk) == "skipped"
    assert started["server"].chat_request_count == 0


def test_the_reaper_sends_a_silent_chunk_again_and_the_next_delivery_skips_done_items(started, sent):
    run = started["run"]
    first = run.chunks.get(index=0)
    item = run.release.items.get(position=0)
    Prediction.objects.create(run=run, item=item, position=0, uid=item.uid, status="scored")
    stale = timezone.now() - timedelta(minutes=10)
    RunChunk.objects.filter(pk=first.pk).update(status="running", claim_token="dead", heartbeat_at=stale)
    before = len(sent)
    assert SCORING_CHUNKS.reap(stall_s=60) == 1
    assert RunChunk.objects.get(pk=first.pk).status == "queued"
    assert run_chunks.chunk_process(chunk_id=first.pk) == "done"
    assert started["server"].chat_request_count == 1  # only the item the dead worker had not finished
    assert len(sent) >= before  # the re-send waits for the commit of the test transaction


def test_the_runs_generation_parameters_override_the_endpoints(project, personas, started):
    run = run_creation.run_create(
        release=started["run"].release, actor=None, method="cot", endpoint=started["run"].endpoint,
        generation_params={"max_tokens": 7, "seed": 3}, use_cache=False,
    )  # fmt: skip
    run_lifecycle.run_start(run=run, actor=None)
    run_chunks.chunk_process(chunk_id=run.chunks.first().pk)
    request = started["server"].requests[-1]
    assert request["max_tokens"] == 7 and request["seed"] == 3 and request["temperature"] == 0.0


def test_pausing_hands_the_chunk_back_and_resuming_finishes_the_run(started, personas):
    run = started["run"]
    run_lifecycle.run_pause(run=run, actor=personas["verifier"])
    assert run_chunks.chunk_process(chunk_id=run.chunks.get(index=0).pk) == "skipped"
    run_lifecycle.run_resume(run=run, actor=personas["verifier"])
    for chunk_id in run.chunks.values_list("pk", flat=True):
        assert run_chunks.chunk_process(chunk_id=chunk_id) == "done"
    run.refresh_from_db()
    assert run.status == "completed" and run.results["count"] == 4


def test_failed_items_are_recorded_with_their_error_and_can_be_retried(started, personas):
    run, server = started["run"], started["server"]
    server.script(fs.server_error(503), fs.bad_request("maximum context length exceeded"))
    for chunk_id in run.chunks.values_list("pk", flat=True):
        run_chunks.chunk_process(chunk_id=chunk_id)
    run.refresh_from_db()
    failed = Prediction.objects.filter(run=run, status="failed")
    assert run.status == "completed" and failed.count() == 2
    assert {p.error.split(":")[0] for p in failed} == {"EndpointRetriesExhausted", "EndpointBadRequest"}
    assert run.results["failed"] == 2
    assert run_lifecycle.run_retry_failed(run=run, actor=personas["manager"]) == 2
    for chunk_id in run.chunks.filter(status="queued").values_list("pk", flat=True):
        run_chunks.chunk_process(chunk_id=chunk_id)
    run.refresh_from_db()
    assert run.status == "completed" and not Prediction.objects.filter(run=run, status="failed").exists()


def test_cancelling_stops_the_work(started, personas):
    run = started["run"]
    run_lifecycle.run_cancel(run=run, actor=personas["manager"])
    assert run_chunks.chunk_process(chunk_id=run.chunks.first().pk) == "skipped"
    assert ScoringRun.objects.get(pk=run.pk).status == "cancelled"


def test_a_worker_takes_the_runs_other_chunks_so_lost_messages_never_stall_a_run(started):
    run = started["run"]
    outcomes = run_chunks.run_work(chunk_id=run.chunks.get(index=0).pk, worker="w1")
    assert outcomes == ["done", "done"]
    run.refresh_from_db()
    assert run.status == "completed" and Prediction.objects.filter(run=run).count() == 4
    # The messages of the chunks taken this way arrive later and find nothing to do.
    assert run_chunks.run_work(chunk_id=run.chunks.get(index=1).pk, worker="w2") == ["skipped"]


def test_a_short_setting_run_says_which_questions_it_answered_on_the_whole_paper(started, personas, client):
    """TAT-QA releases carry no short contexts: the run falls back to the long one and says so, item by item."""
    run = started["run"]
    assert run.setting == "short"
    for chunk in run.chunks.order_by("index"):
        run_chunks.chunk_process(chunk_id=chunk.pk)
    run.refresh_from_db()
    assert set(run.predictions.values_list("context", flat=True)) == {"long"}
    assert run.results["long_context_fallbacks"] == run.results["count"] == 4
    assert "context" in runs_progress.prediction_records(run)[0]
    client.force_login(personas["manager"])
    page = client.get(reverse("scoring-run", args=[run.project.slug, run.pk])).content.decode()
    assert 'id="context-fallbacks"' in page and "4 of 4 questions have no short context" in page


def test_a_long_setting_run_counts_no_fallbacks(project, started):
    run = run_creation.run_create(
        release=started["run"].release, actor=None, method="direct", endpoint=started["run"].endpoint,
        setting="long", use_cache=False,
    )  # fmt: skip
    run_lifecycle.run_start(run=run, actor=None)
    for chunk in run.chunks.order_by("index"):
        run_chunks.chunk_process(chunk_id=chunk.pk)
    run.refresh_from_db()
    assert set(run.predictions.values_list("context", flat=True)) == {"long"}
    assert run.results["long_context_fallbacks"] == 0


def test_a_chunk_that_keeps_losing_its_worker_is_given_up_as_failed_predictions(started, settings, sent):
    settings.TATCURATE_JOB_MAX_ATTEMPTS = 2
    run = started["run"]
    first, second = run.chunks.order_by("index")
    assert run_chunks.chunk_process(chunk_id=second.pk) == "done"
    stale = timezone.now() - timedelta(minutes=10)
    RunChunk.objects.filter(pk=first.pk).update(
        status="running", claim_token="dead", worker="gone@host", heartbeat_at=stale, deliveries=2
    )
    assert SCORING_CHUNKS.reap(stall_s=60) == 1
    assert RunChunk.objects.get(pk=first.pk).status == "done"
    failed = Prediction.objects.filter(run=run, status="failed").order_by("position")
    assert list(failed.values_list("position", flat=True)) == [0, 1]
    assert "Given up after 2 deliveries" in failed[0].error and "gone@host" in failed[0].error
    run.refresh_from_db()
    assert run.status == "completed" and run.results["count"] == 4
    assert SCORING_CHUNKS.reap(stall_s=60) == 0
    assert run_lifecycle.run_retry_failed(run=run, actor=None) == 2  # the usual way to try them again
    assert RunChunk.objects.get(pk=first.pk).deliveries == 0  # and the reaper counts its deliveries afresh


def test_a_worker_starting_again_under_its_name_hands_back_its_dead_chunks_at_once(started, sent):
    """Issue 19.4: no waiting for the stall reaper when the killed worker comes back (worker_ready)."""
    run = started["run"]
    first, second = run.chunks.order_by("index")[:2]
    fresh = timezone.now()  # the heartbeat is recent: the stall reaper would leave these alone for minutes
    RunChunk.objects.filter(pk=first.pk).update(
        status="running", claim_token="dead", worker="w1@host", heartbeat_at=fresh
    )
    RunChunk.objects.filter(pk=second.pk).update(
        status="running", claim_token="live", worker="w2@host", heartbeat_at=fresh
    )
    assert SCORING_CHUNKS.reap(stall_s=60) == 0
    assert SCORING_CHUNKS.release_for_worker(worker="w1@host") == 1
    assert RunChunk.objects.get(pk=first.pk).status == "queued"
    assert RunChunk.objects.get(pk=second.pk).status == "running"  # another worker's chunk is not touched
    assert run_chunks.chunk_process(chunk_id=first.pk) == "done"


def finished_events(run) -> list[dict]:
    """What the project's `scoring_run.finished` deliveries said about `run`, in order."""
    import json

    from curation.webhooks.models import WebhookDelivery

    bodies = WebhookDelivery.objects.filter(event="scoring_run.finished").order_by("pk").values_list("body", flat=True)
    events = [json.loads(body)["data"]["run"] for body in bodies]
    return [event for event in events if event["id"] == run.pk]


def test_a_run_whose_every_item_fails_finishes_failed_and_its_webhook_says_so(project, personas, started, settings):
    from curation.webhooks.services import webhook_create

    settings.TATCURATE_WEBHOOK_HOSTS = ["127.0.0.1"]  # the receiver below is on this machine

    webhook_create(
        project=project, actor=personas["manager"], url="http://127.0.0.1:9/hook", events=["scoring_run.finished"]
    )
    run, server = started["run"], started["server"]
    server.default = fs.server_error(503)  # the endpoint never answers: every item fails
    for chunk_id in run.chunks.values_list("pk", flat=True):
        run_chunks.chunk_process(chunk_id=chunk_id)
    run.refresh_from_db()
    assert run.status == "failed" and Prediction.objects.filter(run=run, status="failed").count() == 4
    assert run.error.startswith("Every one of the 4 items failed; the first: EndpointRetriesExhausted")
    [event] = finished_events(run)
    assert (event["status"], event["items_total"], event["items_failed"]) == ("failed", 4, 4)
    assert event["error"] == run.error
    # Retried once the endpoint is back: the same run completes, its error gone, and says so too.
    server.default = fs.ok("Answer: 2019")
    assert run_lifecycle.run_retry_failed(run=run, actor=personas["manager"]) == 4
    for chunk_id in run.chunks.filter(status="queued").values_list("pk", flat=True):
        run_chunks.chunk_process(chunk_id=chunk_id)
    run.refresh_from_db()
    assert (run.status, run.error) == ("completed", "")
    assert [(e["status"], e["items_failed"], e["error"]) for e in finished_events(run)] == [
        ("failed", 4, event["error"]),
        ("completed", 0, ""),
    ]


def test_a_run_with_some_failed_items_completes_and_its_webhook_counts_them(project, personas, started, settings):
    from curation.webhooks.services import webhook_create

    settings.TATCURATE_WEBHOOK_HOSTS = ["127.0.0.1"]  # the receiver below is on this machine

    webhook_create(
        project=project, actor=personas["manager"], url="http://127.0.0.1:9/hook", events=["scoring_run.finished"]
    )
    run, server = started["run"], started["server"]
    server.script(fs.server_error(503), fs.bad_request("maximum context length exceeded"))
    for chunk_id in run.chunks.values_list("pk", flat=True):
        run_chunks.chunk_process(chunk_id=chunk_id)
    run.refresh_from_db()
    [event] = finished_events(run)
    assert (run.status, event["status"], event["items_failed"], event["error"]) == ("completed", "completed", 2, "")

"""The beat reaper and drafting items: a stale heartbeat requeues the chunk, repeated loss fails the item."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.services.drafter import Outcome
from curation.drafting.services.items import JobTakenOver, _item_commit, chunk_process
from curation.drafting.services.jobs import DRAFTING_ITEMS
from curation.drafting.services.runs import run_create, run_start
from curation.jobs import jobs_reap
from curation.models import Instance

pytestmark = pytest.mark.django_db


@pytest.fixture
def started(project, personas, drafting_batch, drafting_contexts, sent_routed, django_capture_on_commit_callbacks):
    run = run_create(project=project, actor=personas["manager"], kind="template", batch=drafting_batch)
    with django_capture_on_commit_callbacks(execute=True):
        run_start(run_id=run.pk, actor=personas["manager"], queue="drafting-test")
    assert sent_routed == [("curation.drafting_chunk", [run.pk, 0], "drafting-test")]
    sent_routed.clear()
    return run


def _vanish(run: DraftingRun, *, minutes: int = 10) -> DraftingItem:
    """What a worker killed on its first item leaves: that item running, the rest of its chunk stamped."""
    ago = timezone.now() - timedelta(minutes=minutes)
    run.items.update(worker="gone@old-host", heartbeat_at=ago)
    DraftingRun.objects.filter(pk=run.pk).update(status=DraftingRun.Status.RUNNING)
    item = run.items.order_by("pk").first()
    DraftingItem.objects.filter(pk=item.pk).update(status=DraftingItem.Status.RUNNING, claim_token="t0", attempts=1)
    return item


def test_a_stale_chunk_is_sent_again_once_and_a_new_worker_finishes_it(
    started, sent_routed, drafting_contexts, django_capture_on_commit_callbacks
):
    item = _vanish(started)
    assert DRAFTING_ITEMS.reap(stall_s=3600) == 0  # ten minutes is not stale for an hour's threshold
    with django_capture_on_commit_callbacks(execute=True):
        assert DRAFTING_ITEMS.reap(stall_s=60) == len(drafting_contexts)
        assert sent_routed == []  # the message waits for the commit of the requeue
    assert sent_routed == [("curation.drafting_chunk", [started.pk, 0], "drafting-test")]
    item.refresh_from_db()
    assert item.status == DraftingItem.Status.PENDING and item.claim_token == ""
    with django_capture_on_commit_callbacks(execute=True):
        assert DRAFTING_ITEMS.reap(stall_s=60) == 0  # idempotent: the requeued rows carry a fresh heartbeat
    assert len(sent_routed) == 1

    assert chunk_process(run_id=started.pk, chunk=0, worker="new@other-host") == len(drafting_contexts)
    started.refresh_from_db()
    assert started.status == DraftingRun.Status.COMPLETED
    assert set(started.items.values_list("worker", flat=True)) == {"new@other-host"}
    assert Instance.objects.filter(context__in=drafting_contexts).values("context").distinct().count() == 3


def test_the_late_result_of_a_reaped_worker_is_dropped(started):
    item = _vanish(started)
    DRAFTING_ITEMS.reap(stall_s=60)
    # The old worker wakes up and commits with its token: nothing is written, the item stays for the new worker.
    late = Outcome(drafts=[{"question": "late?", "answer": ["x"]}], raw_output={})
    with pytest.raises(JobTakenOver):
        _item_commit(started, DraftingItem.objects.get(pk=item.pk), "t0", late)
    assert DraftingItem.objects.get(pk=item.pk).status == DraftingItem.Status.PENDING
    assert not Instance.objects.filter(question="late?").exists()


def test_an_item_lost_with_its_worker_too_often_fails_and_the_run_finishes(started, settings, sent_routed):
    settings.TATCURATE_JOB_MAX_ATTEMPTS = 1
    item = _vanish(started)
    DraftingItem.objects.exclude(pk=item.pk).filter(run=started).update(status=DraftingItem.Status.DRAFTED)
    assert DRAFTING_ITEMS.reap(stall_s=60) == 1 and sent_routed == []
    item.refresh_from_db()
    assert item.status == DraftingItem.Status.FAILED and "Given up after 1 attempts" in item.error
    started.refresh_from_db()
    assert started.status == DraftingRun.Status.FAILED and "gone@old-host" in started.error


def test_items_of_an_unstarted_or_finished_run_are_left_alone(project, personas, drafting_batch, drafting_contexts):
    run = run_create(project=project, actor=personas["manager"], kind="template", batch=drafting_batch)
    run.items.update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert DRAFTING_ITEMS.reap(stall_s=60) == 0  # not started: nothing was ever sent


def test_the_one_beat_reaper_runs_every_kind(started, settings):
    _vanish(started)
    settings.TATCURATE_JOB_HEARTBEAT_S = 15  # stalled after 4 missed beats: one minute
    counts = jobs_reap()
    assert counts == {
        "calibrations": 0,
        "dataset imports": 0,
        "drafting items": 3,
        "export builds": 0,
        "ingestion jobs": 0,
        "release cuts": 0,
        "scoring chunks": 0,
        "webhook deliveries": 0,
    }
    assert settings.CELERY_BEAT_SCHEDULE["reap-stalled-jobs"]["task"] == "curation.jobs_reap"


def test_an_llm_item_renews_its_claim_between_its_two_model_calls(
    project, personas, drafting_batch, drafting_contexts, model_server, monkeypatch
):
    from curation.drafting.services.items import run_process_inline
    from tests.curation.drafting.conftest import endpoint_on

    beats = []
    real = DRAFTING_ITEMS.beat
    monkeypatch.setattr(DRAFTING_ITEMS, "beat", lambda pk, token, **kw: beats.append(token) or real(pk, token, **kw))
    run = run_create(
        project=project,
        actor=None,
        kind="llm",
        batch=drafting_batch,
        endpoint=endpoint_on(project, model_server.base_url),
    )
    assert run_process_inline(run_id=run.pk).status == DraftingRun.Status.COMPLETED
    assert len(beats) == len(set(beats)) == len(drafting_contexts)  # one renewal per item, each with its own token
    assert model_server.chat_request_count == 2 * len(drafting_contexts)

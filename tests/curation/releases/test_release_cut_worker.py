"""A big release cut end to end on a real Celery worker process: queued by the page, frozen by the worker on the
exports queue, shown on the releases page as it goes and as the release it became."""

from __future__ import annotations

import os
import signal

import pytest
from django.test import Client

from curation.models import Instance, TransitionEvent
from curation.releases.models import Release, ReleaseCut
from curation.releases.services import cut as cut_services
from curation.releases.services import jobs as release_jobs
from curation.states import Status
from tests.curation.releases.test_release_scale import validated_world
from tests.support.workers import celery_worker, handed_back, private_queue, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_big_cut_is_frozen_by_the_exports_worker(project, personas, settings):
    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 10
    batch = validated_world(project, papers=4, per_paper=5)
    browser = Client()
    browser.force_login(personas["manager"])
    with celery_worker(queue=private_queue("test-exports")) as worker:
        settings.TATCURATE_EXPORTS_QUEUE = worker["queue"]
        page = browser.post(f"/p/{project.slug}/releases/", {"name": "big", "batch_ids": [batch.pk]}, follow=True)
        assert "is being cut on a worker: 20 instances" in page.content.decode()
        cut = ReleaseCut.objects.get()
        wait_for(
            lambda: ReleaseCut.objects.filter(pk=cut.pk, state__in=("ready", "failed")).exists(),
            timeout=90,
            what="the worker to finish the cut",
        )
    cut.refresh_from_db()
    assert (cut.state, cut.error, cut.items_done) == (ReleaseCut.State.READY, "", 20)
    release = Release.objects.get()
    assert cut.release == release and release.item_count == 20 and release.created_by == personas["manager"]
    assert set(Instance.objects.filter(batch=batch).values_list("status", flat=True)) == {Status.RELEASED}
    page = browser.get(f"/p/{project.slug}/releases/").content.decode()
    assert "Cuts on a worker" not in page and f'href="/p/{project.slug}/releases/{release.pk}/"' in page


def test_a_cut_whose_worker_is_killed_mid_cut_is_finished_once_by_another_worker(project, personas, settings, tmp_path):
    """kill -9 of the worker's process group while it holds the cut (after its first chunk of five); the reaper
    sends the cut back, a differently named worker takes it over, and the release exists exactly once."""
    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 10
    batch = validated_world(project, papers=4, per_paper=5)
    hold = tmp_path / "hold-the-cut"
    hold.write_text("while this file exists the instrumented worker waits before its second chunk")
    queue = private_queue("test-exports-kill")
    settings.TATCURATE_EXPORTS_QUEUE = queue
    with celery_worker(
        queue=queue,
        name="exports-first",
        app="tests.support.held_cut_worker",
        env={"TATCURATE_TEST_CUT_HOLD": str(hold)},
    ) as first:
        cut = cut_services.release_cut_request(
            project=project, actor=personas["manager"], name="big", batch_ids=[batch.pk]
        )
        wait_for(
            lambda: ReleaseCut.objects.filter(pk=cut.pk, state="running", items_done=5).exists(),
            timeout=90,
            what="the first worker to freeze its first chunk",
        )
        os.killpg(first["process"].pid, signal.SIGKILL)
        first["process"].wait()
    cut.refresh_from_db()
    assert (cut.state, cut.worker, cut.attempts) == ("running", first["hostname"], 1)
    assert not Release.objects.exists()  # nothing of the half-frozen cut is visible
    assert set(Instance.objects.filter(batch=batch).values_list("status", flat=True)) == {Status.VALIDATED}

    hold.unlink()
    # The worker is dead, so any heartbeat is stale: a zero threshold stands in for five silent minutes.
    assert release_jobs.RELEASE_CUTS.reap(stall_s=0) == 1
    with celery_worker(queue=queue, name="exports-second") as second:
        wait_for(
            lambda: ReleaseCut.objects.filter(pk=cut.pk, state__in=("ready", "failed")).exists(),
            timeout=90,
            what="the second worker to finish the cut",
        )
    cut.refresh_from_db()
    assert (cut.state, cut.error, cut.items_done, cut.worker) == ("ready", "", 20, second["hostname"])
    assert cut.attempts == 2 and cut.claim_token == ""
    release = Release.objects.get()
    assert cut.release == release and release.item_count == 20 and release.items.count() == 20
    assert set(Instance.objects.filter(batch=batch).values_list("status", flat=True)) == {Status.RELEASED}
    released = TransitionEvent.objects.filter(to_status=Status.RELEASED, instance__batch=batch)
    assert released.count() == 20 and released.values("instance").distinct().count() == 20


def test_a_cold_stopped_worker_whose_pool_hangs_hands_the_cut_back_at_once(project, personas, settings, tmp_path):
    """kill -QUIT of the worker (its main process, as a service manager sends it) while it holds a cut, with the
    pool's stop hanging for good (an injected fault; billiard can deadlock there under load): the worker never exits,
    but it handed the cut back as the signal arrived, before Celery's shutdown reached the pool, so a replacement
    finishes it without waiting for the stall reaper."""
    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 10
    batch = validated_world(project, papers=4, per_paper=5)
    hold = tmp_path / "hold-the-cut"
    hold.write_text("while this file exists the instrumented worker waits before its second chunk")
    queue = private_queue("test-exports-stuck")
    settings.TATCURATE_EXPORTS_QUEUE = queue
    # A stall threshold of minutes: only the worker's own hand-back can free the cut within this test.
    env = {"TATCURATE_TEST_CUT_HOLD": str(hold), "TATCURATE_JOB_HEARTBEAT_S": "60", "TATCURATE_EXPORTS_QUEUE": queue}
    with celery_worker(
        queue=queue, name="exports-stuck", app="tests.support.stuck_pool_worker", env=env, concurrency=2
    ) as first:
        cut = cut_services.release_cut_request(
            project=project, actor=personas["manager"], name="big", batch_ids=[batch.pk]
        )
        wait_for(
            lambda: ReleaseCut.objects.filter(pk=cut.pk, state="running", items_done=5).exists(),
            timeout=90,
            what="the first worker to freeze its first chunk",
        )
        os.kill(first["process"].pid, signal.SIGQUIT)
        wait_for(
            lambda: ReleaseCut.objects.filter(pk=cut.pk, state="pending", claim_token="").exists(),
            timeout=30,
            what="the stopped worker to hand the cut back",
        )
        # The row is handed back before the line is logged: wait for the line rather than read it at once.
        wait_for(
            lambda: handed_back(first, "release cuts") == 1,
            timeout=30,
            what="the stopped worker to log its hand-back",
        )
        assert first["process"].poll() is None  # still stuck in the pool's stop: the hand-back came first
        # It would never stop by itself: kill it now rather than let the fixture's SIGTERM wait 20 s on it.
        os.killpg(first["process"].pid, signal.SIGKILL)
        first["process"].wait()
    hold.unlink()
    with celery_worker(queue=queue, name="exports-after-stuck") as second:
        wait_for(
            lambda: ReleaseCut.objects.filter(pk=cut.pk, state__in=("ready", "failed")).exists(),
            timeout=90,
            what="the replacement to finish the cut",
        )
    cut.refresh_from_db()
    assert (cut.state, cut.worker, cut.items_done) == ("ready", second["hostname"], 20)
    assert Release.objects.count() == 1 and Release.objects.get().item_count == 20

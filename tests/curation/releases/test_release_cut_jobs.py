"""Queued release cuts on the one job mechanism: a claim token and heartbeat per cut, a takeover of a silent one,
and the beat reaper, so a cut whose worker died is finished once (or failed with its reason), never left running."""

from __future__ import annotations

import pytest

from curation.jobs import jobs_reap
from curation.models import Instance, TransitionEvent
from curation.releases.models import Release, ReleaseCut
from curation.releases.services import cut as cut_services
from curation.releases.services import jobs as release_jobs
from curation.states import Status
from tests.curation.releases.test_release_scale import validated_world
from tests.support.jobs import left_by

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(project, personas, settings, sent, django_capture_on_commit_callbacks):
    """A cut of 6 instances (2 papers × 3) queued for a worker, its message already sent and cleared."""
    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 6
    batch = validated_world(project, papers=2, per_paper=3)
    with django_capture_on_commit_callbacks(execute=True):
        cut = cut_services.release_cut_request(
            project=project, actor=personas["manager"], name="big", batch_ids=[batch.pk]
        )
    assert sent == [("curation.release_cut", [cut.pk])]
    sent.clear()
    return cut


def test_a_worker_claims_the_cut_and_records_itself(queued):
    built = release_jobs.RELEASE_CUTS.run(queued.pk, worker="exports@host-a")
    assert (built.state, built.worker, built.attempts, built.claim_token) == ("ready", "exports@host-a", 1, "")
    assert built.release.item_count == 6 and built.heartbeat_at is not None


def test_a_cut_held_by_a_live_worker_is_left_to_it(queued):
    left_by(queued, worker="exports@host-a", minutes=0, items_done=2)
    built = release_jobs.RELEASE_CUTS.run(queued.pk, worker="exports@host-b")
    assert (built.state, built.worker, built.claim_token, built.attempts) == (
        "running",
        "exports@host-a",
        "dead-token",
        1,
    )
    assert not Release.objects.exists()


def test_a_redelivered_task_takes_over_a_silent_cut_and_releases_it_once(queued):
    left_by(queued, worker="exports@host-a", minutes=10, items_done=2)
    built = release_jobs.RELEASE_CUTS.run(queued.pk, worker="exports@host-b")
    assert (built.state, built.worker, built.attempts) == ("ready", "exports@host-b", 2)
    assert Release.objects.count() == 1 and built.release.item_count == 6
    assert TransitionEvent.objects.filter(to_status=Status.RELEASED).count() == 6
    again = release_jobs.RELEASE_CUTS.run(queued.pk, worker="exports@host-c")
    assert again.release == built.release and again.worker == "exports@host-b" and Release.objects.count() == 1


def test_a_worker_that_loses_its_claim_mid_cut_leaves_nothing_written(queued, monkeypatch):
    """Between two chunks another worker takes the cut over: this one stops at its next heartbeat."""
    monkeypatch.setattr(cut_services, "ITEM_CHUNK", 3)
    real_load = cut_services._papers_load
    calls = []

    def taken_over_after_the_first_chunk(paper_ids):
        calls.append(paper_ids)
        if len(calls) == 2:
            ReleaseCut.objects.filter(pk=queued.pk).update(claim_token="someone-else", worker="exports@host-b")
        return real_load(paper_ids)

    monkeypatch.setattr(cut_services, "_papers_load", taken_over_after_the_first_chunk)
    built = release_jobs.RELEASE_CUTS.run(queued.pk, worker="exports@host-a")
    assert (built.state, built.worker, built.claim_token) == ("running", "exports@host-b", "someone-else")
    assert not Release.objects.exists() and built.error == ""
    assert set(Instance.objects.values_list("status", flat=True)) == {Status.VALIDATED}


def test_a_claim_lost_inside_the_write_rolls_the_whole_release_back(queued, monkeypatch):
    """The last check is inside the release's transaction: a cut taken over while it wrote is not released."""
    real_statistics = cut_services.release_statistics

    def taken_over_while_writing(*args, **kwargs):
        ReleaseCut.objects.filter(pk=queued.pk).update(claim_token="someone-else")
        return real_statistics(*args, **kwargs)

    monkeypatch.setattr(cut_services, "release_statistics", taken_over_while_writing)
    built = release_jobs.RELEASE_CUTS.run(queued.pk, worker="exports@host-a")
    assert built.state == "running" and built.release is None
    assert not Release.objects.exists() and not TransitionEvent.objects.filter(to_status=Status.RELEASED).exists()
    assert set(Instance.objects.values_list("status", flat=True)) == {Status.VALIDATED}


def test_the_beat_reaper_sends_a_silent_cut_back_to_the_exports_queue_once(
    queued, sent, django_capture_on_commit_callbacks
):
    left_by(queued, worker="exports@gone", minutes=10, items_done=2)
    assert release_jobs.RELEASE_CUTS.reap(stall_s=3600) == 0  # ten minutes is not silent for an hour's threshold
    with django_capture_on_commit_callbacks(execute=True):
        counts = jobs_reap()  # the default threshold (4 missed beats of 2 s) through the one beat task
    assert counts["release cuts"] == 1
    assert sent == [("curation.release_cut", [queued.pk])]
    queued.refresh_from_db()
    assert (queued.state, queued.claim_token) == ("pending", "")
    with django_capture_on_commit_callbacks(execute=True):
        assert release_jobs.RELEASE_CUTS.reap(stall_s=60) == 0  # idempotent: it is no longer running
    assert len(sent) == 1
    built = release_jobs.RELEASE_CUTS.run(queued.pk, worker="exports@new")
    assert (built.state, built.attempts, built.items_done) == ("ready", 2, 6)


def test_a_cut_whose_workers_keep_dying_fails_with_the_reason_and_no_release(queued, sent, settings):
    settings.TATCURATE_JOB_MAX_ATTEMPTS = 3
    left_by(queued, worker="exports@gone", minutes=10, attempts=3, items_done=2)
    assert release_jobs.RELEASE_CUTS.reap(stall_s=60) == 1
    queued.refresh_from_db()
    assert queued.state == "failed" and queued.finished_at is not None
    assert "Given up after 3 attempts" in queued.error and "exports@gone" in queued.error
    assert sent == [] and not Release.objects.exists()
    assert set(Instance.objects.values_list("status", flat=True)) == {Status.VALIDATED}
    # A failed cut is final: a late message for it changes nothing.
    assert release_jobs.RELEASE_CUTS.run(queued.pk, worker="exports@late").state == "failed"

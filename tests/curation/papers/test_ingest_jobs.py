"""Ingestion jobs on the job mechanism: who may see, retry and discard them (API and pages, every role), their
states (409 where a move does not apply), the claim (a duplicate message exits quietly, a taken-over worker writes
nothing) and the reaper (a silent job is sent again, then failed with the reason)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from curation.errors import Conflict
from curation.models import Paper
from curation.papers import ingestion
from curation.papers.ingestion import INGEST_JOBS
from curation.papers.models import IngestJob
from curation.services.projects import project_create
from tests.curation.papers.ingest_helpers import PAPER, row_counts

ROLES = ["annotator", "verifier", "manager", "outsider", "anonymous"]


def queued(project, personas, name: str = "paper.tex", content: bytes = PAPER.encode()) -> IngestJob:
    return ingestion.ingest_job_request(
        project=project, actor=personas["manager"], uploads=[SimpleUploadedFile(name, content)]
    )


def failed(project, personas) -> IngestJob:
    job = queued(project, personas)
    IngestJob.objects.filter(pk=job.pk).update(state="failed", error="Nothing was stored. x", limit="cpu")
    job.refresh_from_db()
    return job


API_MATRIX = {
    "get": ("get", "", (404, 404, 200, 404, 401)),
    "retry": ("post", "retry/", (404, 404, 202, 404, 401)),
    "discard": ("post", "discard/", (404, 404, 200, 404, 401)),
}


@pytest.mark.parametrize("action", list(API_MATRIX))
@pytest.mark.parametrize("role_index", range(len(ROLES)), ids=ROLES)
def test_api_role_by_action(project, personas, api_client_for, action, role_index):
    job = failed(project, personas)
    role = ROLES[role_index]
    method, suffix, expected = API_MATRIX[action]
    client = api_client_for(None if role == "anonymous" else personas[role])
    response = getattr(client, method)(f"/api/ingestions/{job.pk}/{suffix}")
    assert response.status_code == expected[role_index], response.content
    job.refresh_from_db()
    moved = {"retry": "pending", "discard": "discarded"}.get(action, "failed")
    assert job.state == (moved if expected[role_index] < 300 else "failed")  # nobody else moved it


PAGE_MATRIX = {"manager": (200, 302, 302), "verifier": (403, 403, 403), "annotator": (403, 403, 403)}


@pytest.mark.parametrize("username", list(PAGE_MATRIX))
def test_pages_are_for_managers(project, personas, username):
    job = failed(project, personas)
    browser = Client()
    browser.force_login(personas[username])
    base = f"/p/{project.slug}/papers/ingestions/{job.pk}/"
    page, retry, discard = PAGE_MATRIX[username]
    assert browser.get(base).status_code == page
    assert browser.post(base + "retry/").status_code == retry
    assert browser.post(base + "discard/").status_code == discard
    outsider = Client()
    outsider.force_login(personas["outsider"])
    assert outsider.get(base).status_code == 404


def test_a_job_of_another_project_is_404_on_this_projects_page(project, personas):
    job = failed(project, personas)
    project_create(name="Other", creator=personas["manager"], slug="other")
    browser = Client()
    browser.force_login(personas["manager"])
    assert browser.get(f"/p/other/papers/ingestions/{job.pk}/").status_code == 404


def test_retry_and_discard_only_apply_to_a_failed_or_waiting_job(project, personas, api_client_for):
    client = api_client_for(personas["manager"])
    job = queued(project, personas)
    conflict = client.post(f"/api/ingestions/{job.pk}/retry/")
    assert conflict.status_code == 409 and "only a failed one is retried" in conflict.json()["detail"]
    assert client.post(f"/api/ingestions/{job.pk}/discard/").json()["state"] == "discarded"
    assert not ingestion.ingest_job_folder(job).exists()
    with pytest.raises(Conflict):
        ingestion.ingest_job_discard(job=job, actor=personas["manager"])


def test_a_retried_job_is_read_again_from_its_stored_files(project, personas):
    job = failed(project, personas)
    ingestion.ingest_job_retry(job=job, actor=personas["manager"])
    job.refresh_from_db()
    assert (job.state, job.error, job.limit, job.attempts) == ("pending", "", "", 0)
    job = INGEST_JOBS.run(job.pk, worker="w")
    assert job.state == "done" and Paper.objects.count() == 1


def test_a_duplicate_message_for_a_finished_or_held_job_exits_quietly(project, personas):
    job = queued(project, personas)
    IngestJob.objects.filter(pk=job.pk).update(state="running", claim_token="theirs", heartbeat_at=timezone.now())
    assert INGEST_JOBS.run(job.pk, worker="late").claim_token == "theirs"  # a live worker holds it
    IngestJob.objects.filter(pk=job.pk).update(state="pending", claim_token="")
    done = INGEST_JOBS.run(job.pk, worker="w")
    before = row_counts()
    again = INGEST_JOBS.run(job.pk, worker="again")
    assert (again.state, again.worker, row_counts()) == ("done", done.worker, before)


def test_a_worker_that_lost_its_claim_stores_nothing(project, personas, monkeypatch):
    job = queued(project, personas)
    real = ingestion.sources_read_bounded

    def read_then_lose_the_claim(**kwargs):
        answers = real(**kwargs)
        IngestJob.objects.filter(pk=job.pk).update(claim_token="taken-over")  # the reaper sent it elsewhere
        return answers

    monkeypatch.setattr(ingestion, "sources_read_bounded", read_then_lose_the_claim)
    before = row_counts()
    INGEST_JOBS.run(job.pk, worker="slow")
    job.refresh_from_db()
    assert (job.state, job.claim_token, row_counts()) == ("running", "taken-over", before)


def test_the_reaper_sends_a_silent_job_again_then_fails_it_with_the_reason(project, personas, settings):
    settings.TATCURATE_JOB_MAX_ATTEMPTS = 2
    job = queued(project, personas)
    stale = timezone.now() - timedelta(hours=1)
    IngestJob.objects.filter(pk=job.pk).update(state="running", claim_token="t1", attempts=1, heartbeat_at=stale)
    assert INGEST_JOBS.reap(stall_s=3600 * 2) == 0  # not silent for that long
    assert INGEST_JOBS.reap(stall_s=60) == 1
    job.refresh_from_db()
    assert (job.state, job.claim_token) == ("pending", "")
    IngestJob.objects.filter(pk=job.pk).update(
        state="running", claim_token="t2", attempts=2, worker="gone@host", heartbeat_at=stale
    )
    assert INGEST_JOBS.reap(stall_s=60) == 1
    job.refresh_from_db()
    assert job.state == "failed" and "gone@host" in job.error and job.finished_at is not None
    assert INGEST_JOBS.reap(stall_s=60) == 0  # idempotent


def test_a_refused_upload_at_the_door_leaves_no_file_and_no_job(project, personas, settings):
    settings.TATCURATE_MAX_UPLOAD_BYTES = 1024
    root = ingestion._uploads_root()
    folders = set(root.iterdir()) if root.exists() else set()
    uploads = [SimpleUploadedFile("ok.tex", PAPER.encode()[:500]), SimpleUploadedFile("big.tex", b"%" * 5000)]
    with pytest.raises(Exception, match="1024-byte limit"):
        ingestion.ingest_job_request(project=project, actor=personas["manager"], uploads=uploads)
    assert not IngestJob.objects.exists()
    assert (set(root.iterdir()) if root.exists() else set()) == folders


def test_a_worker_hands_back_the_jobs_it_holds_at_once(project, personas, sent, django_capture_on_commit_callbacks):
    """On shutdown or a restart under its old name (curation/tasks.py) a worker's running jobs go back to the queue
    whatever their heartbeat, never failed, and are sent again; another worker's live job is left alone."""
    from curation.jobs import jobs_release_for_worker

    mine, theirs = queued(project, personas), queued(project, personas)
    sent.clear()
    now = timezone.now()
    for job, worker in ((mine, "ingest@host-a"), (theirs, "ingest@host-b")):
        IngestJob.objects.filter(pk=job.pk).update(
            state="running", claim_token="t", attempts=5, worker=worker, heartbeat_at=now
        )
    with django_capture_on_commit_callbacks(execute=True):
        counts = jobs_release_for_worker(worker="ingest@host-a")
    assert counts["ingestion jobs"] == 1
    assert sent == [("curation.paper_ingest", [mine.pk])]
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert (mine.state, mine.claim_token, mine.error) == ("pending", "", "")  # 5 attempts, still not given up
    assert (theirs.state, theirs.claim_token) == ("running", "t")

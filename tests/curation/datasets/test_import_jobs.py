"""Big dataset imports on a worker (curation/datasets/jobs.py): checked and stored by the request, imported by the
exports queue in one transaction, on the one job mechanism (claim token, heartbeat, reaper, hand-back), with their
progress on the imports page and in the API."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from curation.datasets import jobs as dataset_jobs
from curation.datasets.jobs import DATASET_IMPORTS
from curation.datasets.models import ImportJob, ImportRecord
from curation.datasets.services import dataset_import
from curation.errors import InvalidInput
from curation.jobs import jobs_reap
from curation.models import Instance
from curation.releases.models import Release
from tests.conftest import postgres_only
from tests.curation.datasets.test_imports import tatqa_document, tatqa_question
from tests.support.jobs import left_by

pytestmark = pytest.mark.django_db


def tatqa_file(documents: int = 3, per_document: int = 2) -> bytes:
    data = [
        tatqa_document(f"t{i}", [tatqa_question(f"q{i}-{j}", order=j + 1) for j in range(per_document)])
        for i in range(documents)
    ]
    return json.dumps(data).encode()


@pytest.fixture
def big(settings, tmp_path):
    """Files of 4 questions or more go to a worker; the stored files land under a fresh media folder."""
    settings.TATCURATE_DATASET_IMPORT_ASYNC_MIN_QUESTIONS = 4
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return settings


def stored_files(settings) -> list[Path]:
    root = Path(settings.MEDIA_ROOT) / "imports"
    return sorted(root.iterdir()) if root.exists() else []


def request_import(project, personas, content: bytes, **options):
    return dataset_jobs.dataset_import_request(
        project=project,
        actor=personas["manager"],
        format="tatqa",
        source_name="dev.json",
        content=content,
        **options,
    )


@pytest.fixture
def queued(project, personas, big, sent, django_capture_on_commit_callbacks):
    """A file of 6 questions queued for a worker, its message sent and cleared."""
    with django_capture_on_commit_callbacks(execute=True):
        job = request_import(project, personas, tatqa_file(), as_release="tatqa-dev")
    assert isinstance(job, ImportJob) and sent == [("curation.dataset_import", [job.pk])]
    sent.clear()
    return job


def test_a_small_file_imports_in_the_request_and_queues_nothing(project, personas, big, sent):
    result = request_import(project, personas, tatqa_file(documents=1, per_document=3))
    assert result.created and result.record.counts["questions"] == 3
    assert not ImportJob.objects.exists() and sent == [] and stored_files(big) == []


def test_a_big_file_is_stored_and_queued_and_nothing_imported_yet(queued, big):
    assert (queued.state, queued.questions_total, queued.questions_done, queued.source_bytes) == (
        "pending",
        6,
        0,
        len(tatqa_file()),
    )
    assert stored_files(big) == [dataset_jobs.import_job_file(queued)]
    assert dataset_jobs.import_job_file(queued).read_bytes() == tatqa_file()
    assert not Instance.objects.exists() and not ImportRecord.objects.exists()


def test_the_worker_imports_it_whole_marks_it_done_and_removes_the_file(queued, big):
    job = DATASET_IMPORTS.run(queued.pk, worker="exports@host-a")
    assert (job.state, job.worker, job.attempts, job.claim_token, job.error) == ("done", "exports@host-a", 1, "", "")
    assert job.questions_done == 6 and job.percent == 100
    assert job.record.counts["questions"] == 6 and Instance.objects.count() == 6
    assert Release.objects.get().import_record == job.record  # as_release: cut in the import's transaction
    assert stored_files(big) == []
    assert DATASET_IMPORTS.run(queued.pk, worker="exports@host-b").worker == "exports@host-a"


@pytest.mark.parametrize(
    ("content", "options", "message"),
    [
        (b'[{"table": ', {}, "line 1"),
        (json.dumps([tatqa_document("t0", [tatqa_question(f"q{j}", answer_type="?") for j in range(5)])]), {},
         "answer"),
        (tatqa_file(), {"as_release": "tatqa-v2"}, "Leave the version out of the name"),
    ],
    ids=["broken-json", "bad-value", "versioned-release-name"],
)  # fmt: skip
def test_a_bad_big_file_is_refused_at_once_and_nothing_is_stored(
    project, personas, big, sent, content, options, message
):
    content = content.encode() if isinstance(content, str) else content
    with pytest.raises(InvalidInput) as error:
        request_import(project, personas, content, **options)
    assert message in error.value.message
    assert not ImportJob.objects.exists() and stored_files(big) == [] and sent == []


def test_the_same_file_while_it_waits_or_once_imported_is_not_queued_again(queued, project, personas, sent):
    assert request_import(project, personas, tatqa_file()) == queued and sent == []
    DATASET_IMPORTS.run(queued.pk, worker="exports@host-a")
    again = request_import(project, personas, tatqa_file())
    assert not again.created and again.record == ImportJob.objects.get().record and ImportJob.objects.count() == 1


def test_only_a_manager_may_queue_an_import(project, personas, big):
    with pytest.raises(Exception, match="Only a manager"):
        dataset_jobs.dataset_import_request(
            project=project, actor=personas["verifier"], format="tatqa", source_name="x.json", content=tatqa_file()
        )
    assert not ImportJob.objects.exists()


def test_a_job_held_by_a_live_worker_is_left_to_it(queued):
    left_by(queued, worker="exports@host-a", minutes=0, questions_done=2)
    job = DATASET_IMPORTS.run(queued.pk, worker="exports@host-b")
    assert (job.state, job.worker, job.claim_token) == ("running", "exports@host-a", "dead-token")
    assert not ImportRecord.objects.exists()


def test_a_redelivered_task_takes_over_a_silent_job_and_imports_it_once(queued):
    left_by(queued, worker="exports@host-a", minutes=10, questions_done=2)
    job = DATASET_IMPORTS.run(queued.pk, worker="exports@host-b")
    assert (job.state, job.worker, job.attempts) == ("done", "exports@host-b", 2)
    assert ImportRecord.objects.count() == 1 and Instance.objects.count() == 6


def test_a_job_whose_import_committed_before_its_worker_died_is_only_marked_done(queued, project):
    dataset_import(project=project, actor=None, format="tatqa", source_name="dev.json", content=tatqa_file())
    left_by(queued, worker="exports@host-a", minutes=10, questions_done=2)
    job = DATASET_IMPORTS.run(queued.pk, worker="exports@host-b")
    assert job.state == "done" and job.record == ImportRecord.objects.get() and Instance.objects.count() == 6


def test_the_beat_reaper_sends_a_silent_job_back_once_and_gives_up_after_the_attempts(
    queued, sent, settings, big, django_capture_on_commit_callbacks
):
    left_by(queued, worker="exports@host-a", minutes=10, questions_done=2)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_reap()["dataset imports"] == 1 and jobs_reap()["dataset imports"] == 0
    assert sent == [("curation.dataset_import", [queued.pk])]
    queued.refresh_from_db()
    assert (queued.state, queued.claim_token) == ("pending", "")
    left_by(queued, worker="exports@host-a", minutes=10, attempts=settings.TATCURATE_JOB_MAX_ATTEMPTS, questions_done=2)
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_reap()["dataset imports"] == 1
    queued.refresh_from_db()
    assert queued.state == "failed" and "went silent" in queued.error and queued.finished_at is not None
    assert stored_files(big) == [] and not ImportRecord.objects.exists()


def test_a_stopping_worker_hands_its_job_back_at_once(queued, sent, django_capture_on_commit_callbacks):
    left_by(queued, worker="exports@host-a", minutes=0, questions_done=2)
    with django_capture_on_commit_callbacks(execute=True):
        assert DATASET_IMPORTS.release_for_worker(worker="exports@host-b") == 0
        assert DATASET_IMPORTS.release_for_worker(worker="exports@host-a") == 1
    queued.refresh_from_db()
    assert queued.state == "pending" and sent == [("curation.dataset_import", [queued.pk])]


def test_a_requester_no_longer_manager_fails_the_job_with_the_reason_and_nothing_is_written(queued, personas, big):
    personas["manager"].memberships.all().delete()
    job = DATASET_IMPORTS.run(queued.pk, worker="exports@host-a")
    assert job.state == "failed" and "Only a manager" in job.error
    assert not ImportRecord.objects.exists() and not Instance.objects.exists() and stored_files(big) == []


@postgres_only()  # on SQLite the import's transaction holds the one write lock: no other connection writes meanwhile
@pytest.mark.django_db(transaction=True)
def test_a_claim_lost_midway_rolls_the_whole_import_back(project, personas, big, sent, monkeypatch):
    """The reaper takes the job over (on its own connection) while the import writes; the heartbeat thread finds
    the claim gone, the worker's next progress step stops the import, and its transaction writes nothing."""
    big.TATCURATE_JOB_HEARTBEAT_S = 0.05
    job = request_import(project, personas, tatqa_file())
    real = dataset_jobs.dataset_import

    def take_over() -> None:
        ImportJob.objects.filter(pk=job.pk).update(claim_token="the-reapers")
        connection.close()

    def taken_over_midway(**kwargs):
        progress = kwargs["progress"]

        def step(count: int) -> None:
            progress(count)
            reaper = threading.Thread(target=take_over)
            reaper.start()
            reaper.join()
            for _ in range(2000):  # until the heartbeat thread has seen it (the test fails if it never does)
                progress(0)
                time.sleep(0.005)

        return real(**{**kwargs, "progress": step})

    monkeypatch.setattr(dataset_jobs, "dataset_import", taken_over_midway)
    after = DATASET_IMPORTS.run(job.pk, worker="exports@host-a")
    assert (after.state, after.claim_token) == ("running", "the-reapers")
    assert not ImportRecord.objects.exists() and not Instance.objects.exists()


# --- The doors: page and API ----------------------------------------------------------------------------------


def upload(content: bytes, name: str = "dev.json") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/json")


def test_the_page_queues_a_big_file_and_shows_its_progress_until_it_is_done(project, personas, big, sent):
    browser = Client()
    browser.force_login(personas["manager"])
    url = f"/p/{project.slug}/imports/"
    page = browser.post(url, {"format": "tatqa", "file": upload(tatqa_file())}, follow=True).content.decode()
    assert "dev.json is being imported on a worker: 6 questions" in page
    assert "Imports on a worker" in page and "0 of 6 questions" in page and 'hx-trigger="every 2s"' in page
    DATASET_IMPORTS.run(ImportJob.objects.get().pk, worker="exports@host-a")
    page = browser.get(url).content.decode()
    assert "Imports on a worker" not in page and 'hx-trigger="every 2s"' not in page
    assert "<td>dev.json</td><td>TAT-QA</td><td>6</td>" in page


def test_the_page_shows_a_failed_job_with_its_reason_and_stops_polling(queued, project, personas):
    ImportJob.objects.filter(pk=queued.pk).update(
        state="failed", error="Given up after 3 attempts: the worker went silent."
    )
    browser = Client()
    browser.force_login(personas["manager"])
    page = browser.get(f"/p/{project.slug}/imports/").content.decode()
    assert "Failed" in page and "Given up after 3 attempts" in page and 'hx-trigger="every 2s"' not in page


def test_the_api_answers_202_with_the_job_and_its_url_shows_the_import_it_became(
    project, personas, big, sent, api_client_for
):
    client = api_client_for(personas["manager"])
    response = client.post(
        f"/api/projects/{project.slug}/imports/", {"format": "tatqa", "file": upload(tatqa_file())}, format="multipart"
    )
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["state"], body["questions_total"], body["record"]) == ("pending", 6, None)
    assert body["url"] == f"/api/import-jobs/{body['id']}/"
    DATASET_IMPORTS.run(body["id"], worker="exports@host-a")
    done = client.get(body["url"]).json()
    assert (done["state"], done["percent"], done["record"]) == ("done", 100, ImportRecord.objects.get().pk)


def test_a_malformed_big_file_through_the_api_is_a_400_naming_the_problem(project, personas, big, sent, api_client_for):
    client = api_client_for(personas["manager"])
    response = client.post(
        f"/api/projects/{project.slug}/imports/", {"format": "tatqa", "file": upload(b"[{")}, format="multipart"
    )
    assert response.status_code == 400 and "line 1" in json.dumps(response.json())
    assert not ImportJob.objects.exists() and stored_files(big) == []


@pytest.mark.parametrize(
    ("who", "code"), [("manager", 200), ("verifier", 404), ("annotator", 404), ("novice", 404), ("outsider", 404)]
)
def test_only_a_manager_sees_an_import_job(queued, personas, api_client_for, who, code):
    response = api_client_for(personas[who]).get(f"/api/import-jobs/{queued.pk}/")
    assert response.status_code == code
    if code == 404:
        assert "source_name" not in response.json()


@pytest.mark.parametrize(("who", "code"), [("verifier", 403), ("annotator", 403), ("outsider", 404)])
def test_the_imports_page_with_its_jobs_is_refused_to_anyone_but_a_manager(queued, project, personas, who, code):
    """A member is told who may import (the managed-project rule); an outsider learns nothing of the project."""
    browser = Client()
    browser.force_login(personas[who])
    response = browser.get(f"/p/{project.slug}/imports/")
    assert response.status_code == code and b"dev.json" not in response.content
    assert (b"Only a manager of this project may import datasets." in response.content) == (code == 403)


def test_a_failed_job_is_dismissed_from_the_page_and_a_waiting_one_is_not(queued, project, personas):
    browser = Client()
    browser.force_login(personas["manager"])
    url = f"/p/{project.slug}/imports/"
    page = browser.post(url, {"action": "dismiss", "job": queued.pk}, follow=True).content.decode()
    assert "is waiting for a worker; only a failed one is dismissed" in page and ImportJob.objects.exists()
    ImportJob.objects.filter(pk=queued.pk).update(state="failed", error="Given up.")
    assert 'aria-label="Dismiss the failed import of dev.json"' in browser.get(url).content.decode()
    page = browser.post(url, {"action": "dismiss", "job": queued.pk}, follow=True).content.decode()
    assert "The failed import of dev.json was dismissed." in page and not ImportJob.objects.exists()
    assert "Imports on a worker" not in page


@pytest.mark.parametrize(("who", "code"), [("manager", 204), ("verifier", 404), ("annotator", 404), ("outsider", 404)])
def test_only_a_manager_dismisses_a_failed_job_through_the_api(queued, personas, api_client_for, who, code):
    ImportJob.objects.filter(pk=queued.pk).update(state="failed")
    assert api_client_for(personas[who]).delete(f"/api/import-jobs/{queued.pk}/").status_code == code
    assert ImportJob.objects.filter(pk=queued.pk).exists() == (code != 204)


def test_a_waiting_job_is_not_dismissed_through_the_api(queued, personas, api_client_for):
    response = api_client_for(personas["manager"]).delete(f"/api/import-jobs/{queued.pk}/")
    assert response.status_code == 409 and ImportJob.objects.filter(pk=queued.pk).exists()

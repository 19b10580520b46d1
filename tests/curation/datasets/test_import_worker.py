"""A big dataset import end to end on a real Celery worker process: queued by the page, imported by the worker on
the exports queue, shown on the imports page while it waits and as the import it became."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from curation.datasets.models import ImportJob, ImportRecord
from curation.models import Instance
from curation.states import Status
from tests.curation.datasets.test_import_jobs import tatqa_file
from tests.support.workers import celery_worker, private_queue, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_big_import_is_written_by_the_exports_worker(project, personas, settings, tmp_path):
    settings.TATCURATE_DATASET_IMPORT_ASYNC_MIN_QUESTIONS = 4
    browser = Client()
    browser.force_login(personas["manager"])
    url = f"/p/{project.slug}/imports/"
    with celery_worker(queue=private_queue("test-exports-import")) as worker:
        settings.TATCURATE_EXPORTS_QUEUE = worker["queue"]
        file = SimpleUploadedFile("dev.json", tatqa_file(documents=4, per_document=3), content_type="application/json")
        page = browser.post(url, {"format": "tatqa", "file": file, "as_release": "tatqa-dev"}, follow=True)
        assert "dev.json is being imported on a worker: 12 questions" in page.content.decode()
        job = ImportJob.objects.get()
        wait_for(
            lambda: ImportJob.objects.filter(pk=job.pk, state__in=("done", "failed")).exists(),
            timeout=90,
            what="the worker to finish the import",
        )
    job.refresh_from_db()
    assert (job.state, job.error, job.questions_done, job.attempts) == ("done", "", 12, 1)
    record = ImportRecord.objects.get()
    assert job.record == record and record.created_by == personas["manager"] and record.counts["questions"] == 12
    assert Instance.objects.filter(project=project, status=Status.RELEASED).count() == 12  # cut as tatqa-dev
    page = browser.get(url).content.decode()
    assert "Imports on a worker" not in page and "<td>dev.json</td><td>TAT-QA</td><td>12</td>" in page

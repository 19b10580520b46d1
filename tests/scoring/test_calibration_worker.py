"""A calibration asked from the batches page is answered by a real Celery worker on the scoring queue: the page
queues it, the worker claims the row, asks the scripted panel and records each item's k of n."""

from __future__ import annotations

import pytest
from django.test import Client

from curation.panel.models import Calibration
from tests.scoring.test_calibration import batch, panel_of, panel_server  # noqa: F401 (fixtures)
from tests.support.workers import celery_worker, private_queue, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_the_scoring_worker_calibrates_a_batch_asked_from_the_page(
    project,
    personas,
    settings,
    batch,  # noqa: F811
    panel_server,  # noqa: F811
):
    panel_of(project, personas, panel_server, names=("strong", "weak"))
    manager = Client()
    manager.force_login(personas["manager"])
    with celery_worker(queue=private_queue("test-scoring")) as worker:
        settings.TATCURATE_SCORING_QUEUE = worker["queue"]
        page = manager.post(f"/p/{project.slug}/batches/", {"action": "calibrate", "batch": batch.pk}, follow=True)
        assert "Calibration asked" in page.content.decode()
        wait_for(
            lambda: Calibration.objects.filter(state__in=("done", "failed")).exists(),
            timeout=90,
            what="the worker to calibrate the batch",
        )
    calibration = Calibration.objects.get()
    assert (calibration.state, calibration.error, calibration.items_done) == ("done", "", 6)
    assert calibration.worker == worker["hostname"]
    verdicts = sorted(batch.instances.values_list("panel_correct", "panel_size"))
    assert verdicts == [(0, 2), (0, 2), (1, 2), (1, 2), (2, 2), (2, 2)]
    page = manager.get(f"/p/{project.slug}/batches/").content.decode()
    assert "Done · 6 / 6" in page and "0 of 2: 2" in page

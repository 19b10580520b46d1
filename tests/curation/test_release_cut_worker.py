"""A big release cut end to end on a real Celery worker process: queued by the page, frozen by the worker on the
exports queue, shown on the releases page as it goes and as the release it became."""

from __future__ import annotations

import pytest
from django.test import Client

from curation.models import Instance
from curation.releases.models import Release, ReleaseCut
from curation.states import Status
from tests.curation.test_release_scale import validated_world
from tests.support.workers import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_big_cut_is_frozen_by_the_exports_worker(project, personas, settings):
    settings.TATCURATE_RELEASE_CUT_ASYNC_MIN_ITEMS = 10
    batch = validated_world(project, papers=4, per_paper=5)
    browser = Client()
    browser.force_login(personas["manager"])
    with celery_worker(queue="test-exports-" + project.slug) as worker:
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

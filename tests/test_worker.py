"""A real Celery worker process picks up a task from the broker and writes to the database (no eager mode)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.tasks import leases_reap_task
from curation.models import Instance, WorkerHeartbeat
from curation.services.lifecycle import instance_transition
from curation.states import Status
from tests.support.workers import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_worker_process_runs_a_task_that_writes_to_the_database(personas, make_instance):
    instance = make_instance()
    instance_transition(
        instance_id=instance.pk,
        target=Status.IN_REFINEMENT,
        actor=personas["annotator"],
        assignments={"lease_expires_at": timezone.now() - timedelta(minutes=1)},
    )

    with celery_worker() as worker:
        leases_reap_task.apply_async(queue=worker["queue"])
        wait_for(
            lambda: Instance.objects.get(pk=instance.pk).status == Status.DRAFTED,
            timeout=60,
            what="the worker to return the expired lease",
        )
        assert WorkerHeartbeat.objects.filter(hostname=worker["hostname"]).exists()

    instance.refresh_from_db()
    assert instance.author is None
    assert instance.revisions.filter(kind="lease-expired").count() == 1
    assert instance.events.last().reason == "lease expired"

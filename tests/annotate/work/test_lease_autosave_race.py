"""Issue 19.5: the lease reaper and the holder's autosave on one instance at once, with real transactions on
PostgreSQL. The reaper never fails a row, autosave answers 200 or 409 (never 500), revisions number one after another
and no text is lost."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.work.leases import leases_reap
from curation.batches.services import batch_create, batch_open
from curation.models import Instance
from curation.states import Status
from tests.annotate.review.test_review_concurrency import race
from tests.annotate.work.helpers import queue_next
from tests.conftest import postgres_only

pytestmark = [postgres_only(), pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROUNDS = 12


def test_reaper_and_autosave_racing_never_crash_and_never_500(personas, project, make_instance, api_client_for, caplog):
    batch = batch_open(batch_id=batch_create(project=project, actor=None, name="B1").pk, actor=None)
    for _ in range(ROUNDS):
        make_instance(batch=batch)
    annotator = api_client_for(personas["annotator"])
    caplog.set_level(logging.ERROR)
    outcomes = []
    for round_number in range(ROUNDS):
        held = queue_next(project=project, user=personas["annotator"])
        assert held is not None and held.status == Status.IN_REFINEMENT
        Instance.objects.filter(pk=held.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        text = f"Edited in round {round_number}?"
        reaped, saved = race(
            leases_reap,
            lambda held=held, text=text: annotator.post(
                f"/api/instances/{held.pk}/autosave/",
                {"expected_version": held.version, "question": text},
                format="json",
            ),
        )
        assert isinstance(reaped, int), f"the reaper raised {reaped!r}"
        assert not isinstance(saved, BaseException), f"autosave raised {saved!r}"
        assert saved.status_code in (200, 403, 409), (saved.status_code, saved.content)
        outcomes.append((reaped, saved.status_code))
        instance = Instance.objects.get(pk=held.pk)
        numbers = list(instance.revisions.order_by("number").values_list("number", flat=True))
        assert numbers == list(range(1, len(numbers) + 1))
        if saved.status_code == 200:  # the edit landed: it is on the instance and in a revision, whoever won
            assert instance.question == text
            assert instance.revisions.filter(fields__question=text).exists()
        if reaped:
            assert instance.status == Status.DRAFTED
            assert instance.revisions.filter(kind="lease-expired").exists()
        else:
            Instance.objects.filter(pk=held.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
            assert leases_reap() == 1  # the saved instance's lease still returns on the next beat
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
    assert {reaped for reaped, _ in outcomes} <= {0, 1}

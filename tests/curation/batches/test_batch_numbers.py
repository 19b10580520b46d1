"""A batch's number (order + 1) is unique in its project: a release cut's typed numbers pick out one batch each.

Two managers creating batches at the same moment both get one, with different numbers (real transactions on
PostgreSQL, each request on its own connection); a number taken anyway is a Conflict (409, a message on the page)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError
from django.db.models import Max
from rest_framework.test import APIClient

from curation.batches import services as batch_services
from curation.batches.services import batch_create
from curation.errors import Conflict
from curation.models import Batch
from tests.annotate.review.test_review_concurrency import race
from tests.conftest import postgres_only
from tests.support.clients import logged_in

PAIRS = 6


def _post_batch(user, slug: str, name: str) -> tuple[int, dict]:
    client = APIClient()
    client.force_authenticate(user)
    response = client.post("/api/batches/", {"project": slug, "name": name}, format="json")
    return response.status_code, response.json()


@postgres_only()
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_batches_created_at_once_both_get_a_number_of_their_own(project, personas):
    manager = personas["manager"]
    for pair in range(PAIRS):
        first, second = race(
            lambda pair=pair: _post_batch(manager, project.slug, f"Left {pair}"),
            lambda pair=pair: _post_batch(manager, project.slug, f"Right {pair}"),
        )
        assert (first[0], second[0]) == (201, 201), (first, second)
        assert first[1]["number"] != second[1]["number"], (first, second)
    numbers = sorted(batch.number for batch in Batch.objects.filter(project=project))
    assert numbers == list(range(1, 2 * PAIRS + 1))


def stale_last_number(monkeypatch) -> None:
    """From now on, batch_create reads the project's last number as it was before the last batch was created, as a
    writer that did not wait for the project's lock would: the number it takes is already taken."""
    monkeypatch.setattr(batch_services, "Max", lambda field: Max(field) - 1)


def test_the_unique_number_is_kept_by_the_database(project):
    batch_create(project=project, actor=None, name="First")
    with pytest.raises(IntegrityError):
        Batch.objects.create(project=project, name="Same number", order=0)


def test_a_number_taken_at_the_same_moment_is_a_conflict(project, personas, monkeypatch):
    batch_create(project=project, actor=None, name="First")
    stale_last_number(monkeypatch)
    with pytest.raises(Conflict, match="Another batch took number 1 in this project at the same moment"):
        batch_create(project=project, actor=personas["manager"], name="Second")


def test_a_number_taken_at_the_same_moment_answers_409_and_creates_nothing(project, personas, monkeypatch):
    batch_create(project=project, actor=None, name="First")
    stale_last_number(monkeypatch)
    status, body = _post_batch(personas["manager"], project.slug, "Second")
    assert status == 409 and "create this one again" in body["detail"] and body["field"] == "order", body
    assert list(Batch.objects.filter(project=project).values_list("name", flat=True)) == ["First"]


def test_a_number_taken_at_the_same_moment_is_said_on_the_batches_page(project, personas, monkeypatch):
    batch_create(project=project, actor=None, name="First")
    stale_last_number(monkeypatch)
    manager = logged_in("manager")
    page = manager.post(f"/p/{project.slug}/batches/", {"action": "create", "name": "Second"}, follow=True)
    html = page.content.decode()
    assert "Another batch took number 1 in this project at the same moment; create this one again." in html
    assert "Batch created." not in html
    assert not Batch.objects.filter(project=project, name="Second").exists()

"""Two requests at once with the same unique value (real transactions on PostgreSQL, each request on its own
connection): one is created, the other answers 409 naming the field, never 500 (issue 35, defect 3: two
`POST /api/projects/` with one slug gave 500 in 8 of 10 pairs)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from curation.models import Membership, Project
from tests.annotate.review.test_review_concurrency import race
from tests.conftest import postgres_only

pytestmark = [postgres_only(), pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
PAIRS = 6


def _post(user, path: str, body: dict):
    client = APIClient()
    client.force_authenticate(user)
    response = client.post(path, body, format="json")
    return response.status_code, response.json()


def _pair(user, path: str, body: dict) -> list[tuple[int, dict]]:
    return sorted(race(lambda: _post(user, path, body), lambda: _post(user, path, body)), key=lambda r: r[0])


def test_a_taken_slug_or_username_answers_409_with_the_field_whether_taken_before_or_at_once(project, personas):
    manager = personas["manager"]
    for number in range(PAIRS):
        slug = f"race-{number}"
        created, refused = _pair(manager, "/api/projects/", {"name": f"Race {number}", "slug": slug})
        assert (created[0], refused[0], refused[1]["field"]) == (201, 409, "slug"), refused
        assert Project.objects.filter(slug=slug).count() == 1
        username = f"racer{number}"
        created, refused = _pair(manager, f"/api/projects/{project.slug}/members/new-user/", {
            "username": username, "role": "annotator"})  # fmt: skip
        assert (created[0], refused[0], refused[1]["field"]) == (201, 409, "username"), refused
        assert get_user_model().objects.filter(username=username).count() == 1
    # Taken before the request: the same answer.
    again = _post(manager, "/api/projects/", {"name": "Race 0", "slug": "race-0"})
    assert (again[0], again[1]["field"]) == (409, "slug")


def test_pairs_without_a_unique_value_both_succeed_and_a_repeated_membership_is_one(project, personas, settings):
    settings.TATCURATE_WEBHOOK_HOSTS = ["127.0.0.1"]
    manager, outsider = personas["manager"], personas["outsider"]
    for number in range(PAIRS):
        batches = _pair(manager, "/api/batches/", {"project": project.slug, "name": f"B{number}"})
        hooks = _pair(manager, f"/api/projects/{project.slug}/webhooks/", {
            "url": "http://127.0.0.1:9/hook", "events": ["release.cut"]})  # fmt: skip
        assert [status for status, _ in batches + hooks] == [201] * 4
    members = _pair(manager, f"/api/projects/{project.slug}/members/", {
        "username": outsider.username, "role": "verifier"})  # fmt: skip
    assert [status for status, _ in members] == [201, 201] and members[0][1]["id"] == members[1][1]["id"]
    assert Membership.objects.filter(user=outsider, project=project, role="verifier").count() == 1

"""Qualification and guidelines API: every endpoint × every role, and the shapes a candidate and a manager get."""

from __future__ import annotations

import pytest

from annotate.qualification import services
from annotate.qualification.guidelines import guidelines_ensure_default
from annotate.qualification.models import Guidelines, QualificationAttempt
from tests.annotate.qualification.support import GOLD_STRINGS, correct_answers, make_gold
from tests.support.shared_world import base_world_build, shared_world, world_copy

ROLES = ["candidate", "annotator", "verifier", "manager", "outsider", "anonymous"]
PERSONA = {"candidate": "novice", "annotator": "annotator", "verifier": "verifier", "manager": "manager"}


@pytest.fixture(scope="module")
def _world(django_db_setup, django_db_blocker):
    """Gold items, a configured exam, default guidelines, and the candidate (novice) with an open attempt: built
    once for the module; each test runs in a savepoint rolled back after it (tests/support/shared_world.py)."""
    with shared_world(django_db_blocker):
        base = base_world_build()
        project, personas = base["project"], base["personas"]
        gold = make_gold(project, base["context"])
        services.qualification_configure(project=project, actor=personas["manager"], instance_ids=[i.pk for i in gold])
        guidelines_ensure_default(project=project)
        attempt = services.attempt_start(project=project, user=personas["novice"])
        yield {"project": project, "gold": gold, "attempt": attempt, "people": personas}


@pytest.fixture
def world(_world, db):
    return world_copy(_world)


@pytest.fixture
def project(world):
    return world["project"]


def request_for(world, name: str):
    slug = world["project"].slug
    attempt = world["attempt"]
    return {
        "settings:get": ("get", f"/api/projects/{slug}/qualification/", None),
        "settings:put": ("put", f"/api/projects/{slug}/qualification/", {"threshold": 0.9}),
        "attempts:start": ("post", f"/api/projects/{slug}/qualification/attempts/", None),
        "attempts:list": ("get", f"/api/projects/{slug}/qualification/attempts/", None),
        "attempt:get": ("get", f"/api/qualification/attempts/{attempt.pk}/", None),
        "attempt:save": ("patch", f"/api/qualification/attempts/{attempt.pk}/", {"answers": {}}),
        "attempt:submit": ("post", f"/api/qualification/attempts/{attempt.pk}/submit/", {}),
        "guidelines:get": ("get", f"/api/projects/{slug}/guidelines/", None),
        "guidelines:publish": ("post", f"/api/projects/{slug}/guidelines/", {"text": "# New rules", "note": "n"}),
        "guidelines:read": ("post", f"/api/projects/{slug}/guidelines/read/", {}),
    }[name]


# Expected status per endpoint, in ROLES order. The attempt belongs to the candidate.
MATRIX = {
    "settings:get": (200, 200, 200, 200, 404, 401),
    "settings:put": (403, 403, 403, 200, 404, 401),
    "attempts:start": (200, 409, 403, 403, 404, 401),
    "attempts:list": (200, 200, 403, 200, 404, 401),
    "attempt:get": (200, 404, 404, 200, 404, 401),
    "attempt:save": (200, 404, 404, 404, 404, 401),
    "attempt:submit": (200, 404, 404, 404, 404, 401),
    "guidelines:get": (200, 200, 200, 200, 404, 401),
    "guidelines:publish": (403, 403, 403, 201, 404, 401),
    "guidelines:read": (200, 200, 200, 200, 404, 401),
}


@pytest.mark.parametrize("endpoint", sorted(MATRIX))
@pytest.mark.parametrize("role_index", range(len(ROLES)), ids=ROLES)
def test_endpoint_permissions(world, api_client_for, endpoint, role_index):
    role = ROLES[role_index]
    user = world["people"].get(PERSONA.get(role, role)) if role != "anonymous" else None
    method, url, body = request_for(world, endpoint)
    response = getattr(api_client_for(user), method)(url, body, format="json")
    assert response.status_code == MATRIX[endpoint][role_index], response.content[:300]


def test_candidate_gets_settings_without_items_and_manager_with_answers(world, api_client_for):
    slug = world["project"].slug
    candidate = api_client_for(world["people"]["novice"]).get(f"/api/projects/{slug}/qualification/").json()
    assert "items" not in candidate
    assert candidate["item_count"] == len(world["gold"])
    assert candidate["me"] == {
        "is_qualified": False,
        "open_attempt": world["attempt"].pk,
        "retry_at": None,
        "attempts": 0,
    }
    manager = api_client_for(world["people"]["manager"]).get(f"/api/projects/{slug}/qualification/").json()
    assert [item["answer"] for item in manager["items"]] == [list(g.answer) for g in world["gold"]]


def test_attempt_shows_items_with_context_but_no_gold_until_submitted(world, api_client_for):
    client = api_client_for(world["people"]["novice"])
    url = f"/api/qualification/attempts/{world['attempt'].pk}/"
    data = client.get(url).json()
    assert data["results"] is None
    first = data["items"][0]
    assert first["question"] == world["gold"][0].question
    assert first["tables"][0]["cells"][1] == ["A", "87.3"]
    assert first["paragraphs"][0]["text"] == "Table 1 shows A beats B."
    assert not any(gold in str(data) for gold in GOLD_STRINGS)

    saved = client.patch(url, {"answers": {str(world["gold"][0].pk): ["Zyxquorbel"]}}, format="json")
    assert saved.status_code == 200
    submitted = client.post(url + "submit/", {"answers": correct_answers(world["gold"])}, format="json").json()
    assert submitted["passed"] is True and submitted["score"] == 1.0
    assert submitted["results"][1]["gold"] == ["Quillfeatherset", "Brambleworthset"]
    assert client.post(url + "submit/", {}, format="json").status_code == 409


def test_bad_bodies_are_400_with_a_message(world, api_client_for):
    client = api_client_for(world["people"]["novice"])
    url = f"/api/qualification/attempts/{world['attempt'].pk}/"
    assert client.patch(url, {"answers": "nope"}, format="json").status_code == 400
    response = client.patch(url, {"answers": {str(world["gold"][0].pk): {"answer": {"x": 1}}}}, format="json")
    assert response.status_code == 400
    assert "list of strings" in response.json()["detail"]
    manager = api_client_for(world["people"]["manager"])
    slug = world["project"].slug
    bad = manager.put(f"/api/projects/{slug}/qualification/", {"instance_ids": [424242]}, format="json")
    assert bad.status_code == 400 and bad.json()["invalid_ids"] == [424242]


def test_start_returns_201_for_a_new_attempt(world, api_client_for, make_user, project):
    from curation.services.projects import membership_add

    make_user("fresh")
    membership_add(project=project, actor=None, username="fresh", role="annotator")
    fresh = world["people"]["novice"].__class__.objects.get(username="fresh")
    response = api_client_for(fresh).post(f"/api/projects/{project.slug}/qualification/attempts/")
    assert response.status_code == 201
    assert QualificationAttempt.objects.filter(user=fresh, submitted_at=None).count() == 1


def test_annotators_list_only_their_own_attempts(world, api_client_for):
    slug = world["project"].slug
    mine = api_client_for(world["people"]["annotator"]).get(f"/api/projects/{slug}/qualification/attempts/").json()
    assert mine == []
    everyone = api_client_for(world["people"]["manager"]).get(f"/api/projects/{slug}/qualification/attempts/").json()
    assert [a["username"] for a in everyone] == ["novice"]


def test_publishing_through_the_api_makes_a_new_version(world, api_client_for):
    slug = world["project"].slug
    response = api_client_for(world["people"]["manager"]).post(
        f"/api/projects/{slug}/guidelines/", {"text": "# v2\n\n<script>x()</script>Body", "note": "shorter"}
    )
    assert response.status_code == 201
    assert response.json()["version"] == 2
    assert "<script>" not in response.json()["html"]
    assert Guidelines.objects.filter(project=world["project"]).count() == 2

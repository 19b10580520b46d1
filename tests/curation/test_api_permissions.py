"""Every core API endpoint × every role: who gets 2xx, who 403, and who learns nothing (404 / 401)."""

from __future__ import annotations

import pytest

from curation.models import Instance, ReasoningType
from curation.services.lifecycle import instance_transition
from curation.states import Status
from tests.conftest import context_build, instance_build, paper_build, personas_build, project_build
from tests.factories import BatchFactory
from tests.support.shared_world import shared_world, world_copy

ROLES = ["annotator", "verifier", "manager", "outsider", "anonymous"]


@pytest.fixture(scope="module")
def _world(django_db_setup, django_db_blocker):
    """A project with one paper, one planned batch and one instance the annotator is refining: built once for
    the module; each test runs in a savepoint rolled back after it (tests/support/shared_world.py)."""
    with shared_world(django_db_blocker):
        project = project_build()
        personas = personas_build(project)
        paper = paper_build(project)
        instance = instance_build(project, context_build(project, paper))
        instance = instance_transition(
            instance_id=instance.pk, target=Status.IN_REFINEMENT, actor=personas["annotator"]
        )
        batch = BatchFactory(project=project, name="Batch 1")
        yield {"project": project, "paper": paper, "instance": instance, "batch": batch, "people": personas}


@pytest.fixture
def world(_world, db):
    return world_copy(_world)


def request_for(world, name: str):
    """(method, url, body) for each endpoint name; bodies are valid so only permissions decide."""
    slug = world["project"].slug
    instance = world["instance"]
    code = ReasoningType.objects.filter(project=world["project"]).first().code
    return {
        "projects:list": ("get", "/api/projects/", None),
        "projects:create": ("post", "/api/projects/", {"name": "Another"}),
        "project:detail": ("get", f"/api/projects/{slug}/", None),
        "members:list": ("get", f"/api/projects/{slug}/members/", None),
        "members:add": ("post", f"/api/projects/{slug}/members/", {"username": "outsider", "role": "annotator"}),
        "types:list": ("get", f"/api/projects/{slug}/reasoning-types/", None),
        "types:update": ("patch", f"/api/projects/{slug}/reasoning-types/{code}/", {"target_proportion": 5}),
        "batches:list": ("get", "/api/batches/", None),
        "batches:create": ("post", "/api/batches/", {"project": slug, "name": "B2"}),
        "batches:open": ("post", f"/api/batches/{world['batch'].pk}/open/", None),
        "papers:list": ("get", "/api/papers/", None),
        "papers:detail": ("get", f"/api/papers/{world['paper'].pk}/", None),
        "instances:list": ("get", "/api/instances/", None),
        "instances:detail": ("get", f"/api/instances/{instance.pk}/", None),
        "instances:edit": (
            "patch",
            f"/api/instances/{instance.pk}/",
            {"expected_version": instance.version, "question": "Edited?"},
        ),
        "instances:transition": (
            "post",
            f"/api/instances/{instance.pk}/transition/",
            {"target": "submitted", "expected_version": instance.version},
        ),
        "instances:history": ("get", f"/api/instances/{instance.pk}/history/", None),
        "schema": ("get", "/api/schema/", None),
    }[name]


# Expected status per endpoint, in ROLES order. The annotator holds the instance (author, in refinement); it has
# no answer form or source yet, so submitting it through the generic transition endpoint is refused by the
# same submission guard as the workspace (400), after the role checks (403/404/401).
MATRIX = {
    "projects:list": (200, 200, 200, 200, 401),
    "projects:create": (403, 403, 201, 403, 401),  # operators and managers start projects
    "project:detail": (200, 200, 200, 404, 401),
    "members:list": (403, 403, 200, 404, 401),
    "members:add": (403, 403, 201, 404, 401),
    "types:list": (200, 200, 200, 404, 401),
    "types:update": (403, 403, 200, 404, 401),
    "batches:list": (200, 200, 200, 200, 401),
    "batches:create": (403, 403, 201, 404, 401),
    "batches:open": (403, 403, 200, 404, 401),
    "papers:list": (200, 200, 200, 200, 401),
    "papers:detail": (404, 200, 200, 404, 401),
    "instances:list": (200, 200, 200, 200, 401),
    "instances:detail": (200, 200, 200, 404, 401),
    "instances:edit": (200, 403, 200, 404, 401),
    "instances:transition": (400, 403, 403, 404, 401),
    "instances:history": (200, 200, 200, 404, 401),
    "schema": (200, 200, 200, 200, 200),  # the API description is public, the data is not
}


@pytest.mark.parametrize("endpoint", sorted(MATRIX))
@pytest.mark.parametrize("role", ROLES)
def test_permission_matrix(world, api_client_for, endpoint, role):
    user = None if role == "anonymous" else world["people"][role]
    method, url, body = request_for(world, endpoint)
    response = getattr(api_client_for(user), method)(url, body, format="json")
    expected = MATRIX[endpoint][ROLES.index(role)]
    assert response.status_code == expected, response.content[:300]


def test_lists_are_scoped_to_the_viewer(world, api_client_for):
    outsider = api_client_for(world["people"]["outsider"])
    assert outsider.get("/api/projects/").json() == []
    assert outsider.get("/api/batches/").json() == []
    assert outsider.get("/api/papers/").json()["results"] == []
    assert outsider.get("/api/instances/").json()["results"] == []
    annotator2 = api_client_for(world["people"]["annotator2"])
    assert annotator2.get("/api/instances/").json()["results"] == []  # not theirs
    assert annotator2.get("/api/papers/").json()["results"] == []
    manager = api_client_for(world["people"]["manager"])
    assert [i["id"] for i in manager.get("/api/instances/").json()["results"]] == [world["instance"].pk]


def test_instances_list_pages_in_id_order_across_projects(world, api_client_for):
    from curation.models import Membership
    from curation.services.projects import project_create
    from curation.states import Role

    # A second project whose name sorts first: the list still goes by id, not by project name.
    other = project_create(name="Aardvark", creator=None, slug="aardvark")
    Membership.objects.create(user=world["people"]["manager"], project=other, role=Role.MANAGER)
    later = [instance_build(other, context_build(other, paper_build(other))) for _ in range(2)]
    manager = api_client_for(world["people"]["manager"])
    first = manager.get("/api/instances/?limit=2").json()
    assert [i["id"] for i in first["results"]] == [world["instance"].pk, later[0].pk] and first["count"] == 3
    assert [i["id"] for i in manager.get(first["next"]).json()["results"]] == [later[1].pk]


def test_instances_list_counts_up_to_the_cap_and_next_still_leads_past_it(world, api_client_for, monkeypatch):
    from curation import pagination

    monkeypatch.setattr(pagination, "COUNT_UP_TO", 2)
    project = world["instance"].project
    more = [
        instance_build(project, context_build(project, paper_build(project)), question=f"Capped question {n}?")
        for n in range(3)
    ]
    manager = api_client_for(world["people"]["manager"])
    first = manager.get("/api/instances/?limit=2").json()
    assert first["count"] == 2 and first["count_capped"] is True
    assert [i["id"] for i in first["results"]] == [world["instance"].pk, more[0].pk]
    second = manager.get(first["next"]).json()
    assert [i["id"] for i in second["results"]] == [more[1].pk, more[2].pk] and second["previous"]
    assert second["next"] is None  # the page itself shows there is nothing after it
    # Under the cap the count is exact and not capped.
    exact = manager.get(f"/api/projects/{project.slug}/instances/", {"q": "Capped question 2"}).json()
    assert exact["count"] == 1 and exact["count_capped"] is False and exact["next"] is None


def test_the_schema_documents_the_capped_count():
    from curation.pagination import BoundedLimitOffsetPagination

    envelope = BoundedLimitOffsetPagination().get_paginated_response_schema({"type": "array"})
    assert "count_capped" in envelope["required"] and envelope["properties"]["count_capped"]["type"] == "boolean"


def test_stale_edit_gets_409_with_current_version(world, api_client_for):
    client = api_client_for(world["people"]["annotator"])
    url = f"/api/instances/{world['instance'].pk}/"
    first = client.patch(url, {"expected_version": world["instance"].version, "question": "One"}, format="json")
    assert first.status_code == 200
    stale = client.patch(url, {"expected_version": world["instance"].version, "question": "Two"}, format="json")
    assert stale.status_code == 409
    assert stale.json()["version"] == first.json()["version"]


def test_edit_records_a_revision(world, api_client_for):
    client = api_client_for(world["people"]["annotator"])
    pk = world["instance"].pk
    client.patch(f"/api/instances/{pk}/", {"expected_version": 2, "answer": ["B", " C "]}, format="json")
    history = client.get(f"/api/instances/{pk}/history/").json()
    assert history["revisions"][-1]["fields"]["answer"] == ["B", "C"]
    assert [e["to_status"] for e in history["events"]] == ["drafted", "in_refinement"]


def test_token_auth_works_for_scripts(world, client):
    from tests.conftest import PASSWORD

    token = client.post("/api/auth/token/", {"username": "manager", "password": PASSWORD}).json()["token"]
    response = client.get("/api/projects/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200
    assert response.json()[0]["roles"] == ["manager"]


# --- The generic transition endpoint goes through the same guards and effects as the step pages -----------------


def _transition(client, instance_id: int, target: str, **body):
    version = Instance.objects.get(pk=instance_id).version
    return client.post(
        f"/api/instances/{instance_id}/transition/",
        {"target": target, "expected_version": version, **body},
        format="json",
    )


def test_generic_transition_refuses_an_empty_submission(world, api_client_for):
    client = api_client_for(world["people"]["annotator"])
    pk = world["instance"].pk
    client.patch(f"/api/instances/{pk}/", {"expected_version": 2, "question": "", "answer": []}, format="json")
    response = _transition(client, pk, "submitted")
    assert response.status_code == 400
    assert {p["field"] for p in response.json()["problems"]} >= {"question", "answer"}
    assert client.get(f"/api/instances/{pk}/").json()["status"] == "in_refinement"


def test_generic_transition_walk_needs_comments_and_opens_and_decides_the_discussion(world, api_client_for):
    from annotate.review.models import Discussion, ReviewComment
    from annotate.review.services import round2_claim

    people, pk = world["people"], world["instance"].pk
    annotator, verifier = api_client_for(people["annotator"]), api_client_for(people["verifier"])
    second = api_client_for(people["annotator2"])
    version = world["instance"].version
    client_patch = {"expected_version": version, "answer_form": "short", "answer_source": "text", "answer_type": "span"}
    assert annotator.patch(f"/api/instances/{pk}/", client_patch, format="json").status_code == 200
    assert _transition(annotator, pk, "submitted").status_code == 200
    assert _transition(verifier, pk, "round1_review").status_code == 200

    refused = _transition(verifier, pk, "changes_requested")
    assert refused.status_code == 400 and "Say what to change" in refused.json()["detail"]
    blank = _transition(verifier, pk, "changes_requested", comments=[{"field": "answer", "text": "  "}])
    assert blank.status_code == 400
    assert not ReviewComment.objects.filter(instance_id=pk).exists()
    assert _transition(verifier, pk, "round2_review").status_code == 200
    round2_claim(instance_id=pk, user=people["annotator2"])  # round two is taken from the review queue

    refused = _transition(second, pk, "in_discussion")
    assert refused.status_code == 400 and "Say what is wrong" in refused.json()["detail"]
    assert not Discussion.objects.filter(instance_id=pk).exists()
    flagged = _transition(second, pk, "in_discussion", comments=[{"field": "answer", "text": "Should be B."}])
    assert flagged.status_code == 200
    discussion = Discussion.objects.get(instance_id=pk)
    assert discussion.is_open and discussion.verifier == people["verifier"]

    assert _transition(verifier, pk, "validated", message="A is right.").status_code == 200
    discussion.refresh_from_db()
    assert (discussion.outcome, discussion.decided_by) == (Discussion.Outcome.REJECTED, people["verifier"])
    assert discussion.messages.filter(author=people["verifier"], text="A is right.").exists()

"""Review, discussion, batch and dashboard API: every endpoint × every role, and the answers people act on."""

from __future__ import annotations

import pytest

from annotate.instances.services import instance_discard
from annotate.review import services as review
from annotate.review.models import ReviewComment
from curation.models import Instance
from curation.states import Status
from tests.annotate.review.helpers import submit, to_discussion, to_round2
from tests.conftest import instance_build
from tests.factories import BatchFactory
from tests.support.shared_world import base_world_build, shared_world, world_copy

ROLES = ["annotator", "annotator2", "verifier", "manager", "outsider", "anonymous"]


@pytest.fixture(scope="module")
def _shared(django_db_setup, django_db_blocker):
    """Built once for the module; each test runs in a savepoint rolled back after it (tests/support/shared_world.py)."""
    with shared_world(django_db_blocker):
        base = base_world_build(with_drafts=True)
        project, context = base["project"], base["context"]
        base["world"] = _review_world(
            base["personas"], project, base["drafts"], lambda **fields: instance_build(project, context, **fields)
        )
        yield base


@pytest.fixture
def shared(_shared, db):
    return world_copy(_shared)


@pytest.fixture
def project(shared):
    return shared["project"]


@pytest.fixture
def personas(shared):
    return shared["personas"]


@pytest.fixture
def context(shared):
    return shared["context"]


@pytest.fixture
def world(shared):
    return shared["world"]


def _review_world(personas, project, drafts, make_instance):
    """One instance in each review state, all written by `annotator` and verified in round one by `verifier`."""
    p = personas
    discussion = to_discussion(project, p, drafts[0])
    r2held = to_round2(project, p, drafts[1])
    r2held = review.round2_claim(instance_id=r2held.pk, user=p["annotator2"])
    r2 = to_round2(project, p, drafts[2])
    r1 = submit(project, p["annotator"], drafts[3])
    r1 = review.review_claim(instance_id=r1.pk, user=p["verifier"])
    sub = submit(project, p["annotator"], drafts[4])
    gone = instance_discard(
        instance_id=drafts[5].pk, actor=p["manager"], expected_version=drafts[5].version, reason="test"
    )
    return {
        "sub": sub,
        "r1": r1,
        "r2": r2,
        "r2held": r2held,
        "discussion": discussion,
        "comment": ReviewComment.objects.get(instance_id=discussion.instance_id),
        "gone": gone,
        "spare": make_instance(),
        "batch": BatchFactory(project=project, name="B2", order=5),
    }


def request_for(name: str, w, slug: str):
    d = w["discussion"]
    version = Instance.objects.get(pk=d.instance_id).version
    change = [{"field": "answer", "text": "Fix it."}]
    return {
        "review:queue": ("get", f"/api/projects/{slug}/review/queue/", None),
        "review:next": ("post", f"/api/projects/{slug}/review/next/", None),
        "review:claim": ("post", f"/api/instances/{w['sub'].pk}/review/claim/", None),
        "review:release": (
            "post",
            f"/api/instances/{w['r1'].pk}/review/release/",
            {"expected_version": w["r1"].version},
        ),
        "review:approve": (
            "post",
            f"/api/instances/{w['r1'].pk}/review/approve/",
            {"expected_version": w["r1"].version},
        ),
        "review:changes": (
            "post",
            f"/api/instances/{w['r1'].pk}/review/request-changes/",
            {"expected_version": w["r1"].version, "comments": change},
        ),
        "review:ping": ("post", f"/api/instances/{w['r1'].pk}/review/ping/", {"activity": "review1"}),
        "round2:queue": ("get", f"/api/projects/{slug}/round2/queue/", None),
        "round2:next": ("post", f"/api/projects/{slug}/round2/next/", None),
        "round2:claim": ("post", f"/api/instances/{w['r2'].pk}/round2/claim/", None),
        "round2:confirm": (
            "post",
            f"/api/instances/{w['r2held'].pk}/round2/confirm/",
            {"expected_version": w["r2held"].version},
        ),
        "round2:flag": (
            "post",
            f"/api/instances/{w['r2held'].pk}/round2/flag/",
            {"expected_version": w["r2held"].version, "comments": change},
        ),
        "comments:list": ("get", f"/api/instances/{w['r1'].pk}/comments/", None),
        "comments:resolve": ("post", f"/api/comments/{w['comment'].pk}/resolve/", None),
        "discussions:list": ("get", f"/api/projects/{slug}/discussions/", None),
        "discussions:detail": ("get", f"/api/discussions/{d.pk}/", None),
        "discussions:reply": ("post", f"/api/discussions/{d.pk}/messages/", {"text": "I see."}),
        "discussions:resolve": (
            "post",
            f"/api/discussions/{d.pk}/resolve/",
            {"outcome": "rejected", "expected_version": version},
        ),
        "revisions:diff": ("get", f"/api/instances/{w['r1'].pk}/revisions/diff/", None),
        "instances:discard": (
            "post",
            f"/api/instances/{w['sub'].pk}/discard/",
            {"expected_version": w["sub"].version, "reason": "duplicate"},
        ),
        "instances:restore": (
            "post",
            f"/api/instances/{w['gone'].pk}/restore/",
            {"expected_version": w["gone"].version},
        ),
        "batches:assign": ("post", f"/api/batches/{w['batch'].pk}/assign/", {"instance_ids": [w["spare"].pk]}),
        "gating": ("post", f"/api/projects/{slug}/gating/", {"gating": "sequential"}),
        "pay": ("post", f"/api/projects/{slug}/pay-settings/", {"pay_per_instance": "1.50"}),
        "dashboard": ("get", f"/api/projects/{slug}/dashboard/", None),
        "dashboard:csv": ("get", f"/api/projects/{slug}/dashboard/csv/?table=annotators", None),
    }[name]


# In ROLES order. `annotator` wrote everything; `verifier` did round one; `annotator2` holds r2held and opened the
# discussion. 404 = the viewer may not even know the object exists; 403 = known but not theirs to act on. An action
# on an instance the viewer may not see answers 404 whatever refuses it, as a missing id does (issue 35).
MATRIX = {
    "review:queue": (403, 403, 200, 403, 404, 401),
    "review:next": (403, 403, 200, 403, 404, 401),
    "review:claim": (403, 404, 200, 403, 404, 401),
    "review:release": (403, 404, 200, 403, 404, 401),
    "review:approve": (403, 404, 200, 403, 404, 401),
    "review:changes": (403, 404, 200, 403, 404, 401),
    "review:ping": (403, 404, 200, 403, 404, 401),
    "round2:queue": (200, 200, 403, 403, 404, 401),
    "round2:next": (204, 200, 403, 403, 404, 401),
    "round2:claim": (403, 200, 403, 403, 404, 401),
    "round2:confirm": (403, 200, 403, 403, 404, 401),
    "round2:flag": (403, 201, 403, 403, 404, 401),
    "comments:list": (200, 404, 200, 200, 404, 401),
    "comments:resolve": (200, 200, 403, 200, 404, 401),
    "discussions:list": (200, 200, 200, 200, 404, 401),
    "discussions:detail": (200, 200, 200, 200, 404, 401),
    "discussions:reply": (403, 201, 201, 201, 404, 401),
    "discussions:resolve": (403, 403, 200, 403, 404, 401),
    "revisions:diff": (200, 404, 200, 200, 404, 401),
    "instances:discard": (403, 404, 403, 200, 404, 401),
    "instances:restore": (404, 404, 403, 200, 404, 401),
    "batches:assign": (403, 403, 403, 200, 404, 401),
    "gating": (403, 403, 403, 200, 404, 401),
    "pay": (403, 403, 403, 200, 404, 401),
    "dashboard": (403, 403, 403, 200, 404, 401),
    "dashboard:csv": (403, 403, 403, 200, 404, 401),
}


@pytest.mark.parametrize("name", sorted(MATRIX))
@pytest.mark.parametrize("role", ROLES)
def test_review_api_permissions(personas, project, world, api_client_for, name, role):
    method, url, body = request_for(name, world, project.slug)
    client = api_client_for(None if role == "anonymous" else personas[role])
    response = getattr(client, method)(url, body, format="json")
    assert response.status_code == MATRIX[name][ROLES.index(role)], response.content[:300]


def test_refused_actions_change_nothing(personas, project, world, api_client_for):
    before = {i.pk: (i.status, i.version) for i in Instance.objects.all()}
    for role in ("annotator", "annotator2", "manager", "outsider"):
        client = api_client_for(personas[role])
        client.post(
            f"/api/instances/{world['r1'].pk}/review/approve/", {"expected_version": world["r1"].version}, format="json"
        )
    assert {i.pk: (i.status, i.version) for i in Instance.objects.all()} == before


def test_stale_decision_answers_409_with_the_current_state(personas, project, world, api_client_for):
    client = api_client_for(personas["verifier"])
    url = f"/api/instances/{world['r1'].pk}/review/approve/"
    stale = client.post(url, {"expected_version": world["r1"].version - 1}, format="json")
    assert stale.status_code == 409
    assert stale.json()["status"] == Status.ROUND1_REVIEW
    assert "changed meanwhile" in stale.json()["detail"]


def test_request_changes_without_comment_is_400(personas, project, world, api_client_for):
    response = api_client_for(personas["verifier"]).post(
        f"/api/instances/{world['r1'].pk}/review/request-changes/",
        {"expected_version": world["r1"].version, "comments": []},
        format="json",
    )
    assert response.status_code == 400
    assert "Say what to change" in response.json()["detail"]


def test_flag_returns_the_thread_and_resolve_records_the_decider(personas, project, world, api_client_for):
    flagged = api_client_for(personas["annotator2"]).post(
        f"/api/instances/{world['r2held'].pk}/round2/flag/",
        {"expected_version": world["r2held"].version, "message": "Wrong unit."},
        format="json",
    )
    assert flagged.status_code == 201
    thread = flagged.json()
    assert thread["is_open"] and thread["verifier"] == "verifier"
    assert thread["messages"][0]["text"] == "Wrong unit."
    version = Instance.objects.get(pk=world["r2held"].pk).version
    decided = api_client_for(personas["verifier"]).post(
        f"/api/discussions/{thread['id']}/resolve/",
        {
            "outcome": "accepted",
            "action": "edit",
            "expected_version": version,
            "fields": {"answer": ["A (87.3%)"]},
        },
        format="json",
    )
    assert decided.status_code == 200, decided.content
    assert (decided.json()["outcome"], decided.json()["decided_by"]) == ("accepted", "verifier")
    assert Instance.objects.get(pk=world["r2held"].pk).answer == ["A (87.3%)"]


def test_revision_diff_between_two_chosen_revisions(personas, project, world, api_client_for):
    r1 = world["r1"]
    review.review_request_changes(
        instance_id=r1.pk,
        user=personas["verifier"],
        expected_version=r1.version,
        comments=[{"field": "answer", "text": "Full name."}],
    )
    submit(project, personas["annotator"], r1, answer=["Model A"])
    numbers = list(r1.revisions.values_list("number", flat=True))
    data = (
        api_client_for(personas["verifier"])
        .get(f"/api/instances/{r1.pk}/revisions/diff/?a={numbers[0]}&b={numbers[-1]}")
        .json()
    )
    assert (data["a"], data["b"]) == (numbers[0], numbers[-1])
    rows = {row["field"]: row for row in data["diff"]}
    assert rows["answer"]["changed"] and ["insert", "Model "] in rows["answer"]["parts"]
    assert not rows["question"]["changed"]


def test_the_one_versioned_step_class_documents_each_urls_own_body_and_description(db):
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    expected = {
        "/api/instances/{id}/review/approve/": ("DecisionRequest", "Approve in round one"),
        "/api/instances/{id}/review/request-changes/": ("DecisionRequest", "Send back to the annotator"),
        "/api/instances/{id}/review/release/": ("VersionRequest", "Give a held round-one review back"),
        "/api/instances/{id}/round2/confirm/": ("VersionRequest", "Confirm in round two"),
        "/api/instances/{id}/discard/": ("DiscardRequest", "A manager discards"),
        "/api/instances/{id}/restore/": ("RestoreRequest", "A manager restores"),
    }
    paths = {path.replace("{pk}", "{id}"): item for path, item in schema["paths"].items()}
    for path, (component, description) in expected.items():
        operation = paths[path]["post"]
        body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert body == f"#/components/schemas/{component}", path
        assert operation["description"].startswith(description), path
        assert operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/Instance")
    assert schema["components"]["schemas"]["DiscardRequest"]["required"] == ["expected_version", "reason"]


def test_a_discard_without_a_reason_is_a_400_naming_it_and_changes_nothing(personas, world, api_client_for):
    before = Instance.objects.get(pk=world["sub"].pk)
    response = api_client_for(personas["manager"]).post(
        f"/api/instances/{world['sub'].pk}/discard/", {"expected_version": before.version}, format="json"
    )
    assert response.status_code == 400 and "reason" in response.json()
    after = Instance.objects.get(pk=world["sub"].pk)
    assert (after.status, after.version) == (before.status, before.version)


def test_round2_queue_counts_up_to_the_cap_and_says_so(personas, project, drafts, api_client_for, monkeypatch, client):
    from curation import pagination
    from tests.annotate.review.helpers import to_round2

    reviewer = api_client_for(personas["annotator2"])
    to_round2(project, personas)
    exact = reviewer.get(f"/api/projects/{project.slug}/round2/queue/").json()
    assert exact["available"] >= 1 and exact["available_capped"] is False
    monkeypatch.setattr(pagination, "COUNT_UP_TO", exact["available"])
    to_round2(project, personas)
    capped = reviewer.get(f"/api/projects/{project.slug}/round2/queue/").json()
    assert (capped["available"], capped["available_capped"]) == (exact["available"], True)
    client.force_login(personas["annotator2"])
    page = client.get(f"/p/{project.slug}/review/").content.decode()
    assert f"More than {exact['available']} instance" in page


def test_the_discussion_api_reads_the_thread_not_the_paper(personas, world, api_client_for):
    """Reading, replying to or resolving a thread checks who may see it and reads no paragraph or table of the
    paper: the context is for the discussion page, not for these answers."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    pk = world["discussion"].pk
    client = api_client_for(personas["annotator2"])
    with CaptureQueriesContext(connection) as read:
        assert client.get(f"/api/discussions/{pk}/").status_code == 200
        assert client.post(f"/api/discussions/{pk}/messages/", {"text": "I see."}, format="json").status_code == 201
    paper_reads = [q["sql"] for q in read if "curation_paragraph" in q["sql"] or "curation_table" in q["sql"]]
    assert paper_reads == []


def test_a_review_page_in_use_keeps_its_lease_in_either_round(personas, world, api_client_for):
    from datetime import timedelta

    from django.utils import timezone

    claimed = world["r2held"]  # held in round two by annotator2
    soon = timezone.now() + timedelta(seconds=30)
    Instance.objects.filter(pk=claimed.pk).update(lease_expires_at=soon)
    client = api_client_for(personas["annotator2"])
    pinged = client.post(f"/api/instances/{claimed.pk}/review/ping/", {"activity": "review2"}, format="json")
    assert pinged.status_code == 200
    assert Instance.objects.get(pk=claimed.pk).lease_expires_at > soon + timedelta(minutes=5)

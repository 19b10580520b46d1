"""Drafting API: role × action permissions for every endpoint, endpoint tests against faults, runs end to end."""

from __future__ import annotations

import pytest

from curation.drafting.models import DraftingRun
from curation.drafting.services.runs import run_create
from curation.models import Instance
from tests.curation.drafting.conftest import endpoint_on, garbage, make_contexts, scripted_reply
from tests.curation.webhooks.receivers import closed_port_url, silent_port
from tests.factories import BatchFactory, ModelEndpointFactory
from tests.support.fault_server import FaultServer, unauthorized
from tests.support.shared_world import base_world_build, shared_world, world_copy

pytestmark = pytest.mark.django_db

ROLES = ["annotator", "verifier", "manager", "outsider", "anonymous"]


@pytest.fixture(scope="module")
def _world(django_db_setup, django_db_blocker):
    """Built once for the module (with its model server); each test runs in a savepoint rolled back after it
    (tests/support/shared_world.py)."""
    with FaultServer(responder=scripted_reply) as model_server, shared_world(django_db_blocker):
        base = base_world_build()
        project, personas = base["project"], base["personas"]
        batch = BatchFactory(project=project, name="Drafting batch")
        make_contexts(project, batch, 3)
        endpoint = endpoint_on(project, model_server.base_url)
        global_endpoint = ModelEndpointFactory(
            project=None, name="Global", base_url=model_server.base_url, model="fault-model"
        )
        run = run_create(project=project, actor=personas["manager"], kind="template", batch=batch)
        yield {"project": project, "people": personas, "endpoint": endpoint, "global": global_endpoint, "run": run}


@pytest.fixture
def world(_world, db, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    return world_copy(_world)


def request_for(world, name: str):
    slug = world["project"].slug
    endpoint, run = world["endpoint"], world["run"]
    return {
        "endpoints:list": ("get", f"/api/projects/{slug}/endpoints/", None),
        "endpoints:create": (
            "post",
            f"/api/projects/{slug}/endpoints/",
            {"name": "New", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "SOME_KEY"},
        ),
        "endpoint:detail": ("get", f"/api/endpoints/{endpoint.pk}/", None),
        "endpoint:edit": ("patch", f"/api/endpoints/{endpoint.pk}/", {"timeout_s": 7}),
        "endpoint:test": ("post", f"/api/endpoints/{endpoint.pk}/test/", None),
        "global:edit": ("patch", f"/api/endpoints/{world['global'].pk}/", {"timeout_s": 7}),
        "templates:list": ("get", f"/api/projects/{slug}/prompt-templates/", None),
        "templates:save": (
            "post",
            f"/api/projects/{slug}/prompt-templates/",
            {"kind": "rationale_answer", "text": "Q: {{question}}\n{{context}}\nReason:"},
        ),
        "runs:list": ("get", f"/api/projects/{slug}/drafting-runs/", None),
        "runs:create": (
            "post",
            f"/api/projects/{slug}/drafting-runs/",
            {"kind": "llm", "batch": run.batch_id, "endpoint": endpoint.pk, "options": {"redraft": True}},
        ),
        "run:detail": ("get", f"/api/drafting-runs/{run.pk}/", None),
        "run:cancel": ("post", f"/api/drafting-runs/{run.pk}/cancel/", None),
    }[name]


MATRIX = {
    "endpoints:list": (403, 403, 200, 404, 401),
    "endpoints:create": (403, 403, 201, 404, 401),
    "endpoint:detail": (403, 200, 200, 404, 401),
    "endpoint:edit": (403, 403, 200, 404, 401),
    "endpoint:test": (403, 403, 200, 404, 401),
    # Shared by every project: operators edit, managers see; other members see it when scoring (one visibility
    # rule, curation.visibility.ModelEndpointQuerySet), so they are refused rather than told it does not exist.
    "global:edit": (403, 403, 403, 404, 401),
    "templates:list": (403, 403, 200, 404, 401),
    "templates:save": (403, 403, 201, 404, 401),
    "runs:list": (403, 403, 200, 404, 401),
    "runs:create": (403, 403, 201, 404, 401),
    "run:detail": (403, 403, 200, 404, 401),
    "run:cancel": (403, 403, 200, 404, 401),
}


@pytest.mark.parametrize("action", sorted(MATRIX))
@pytest.mark.parametrize("role", ROLES)
def test_permission_matrix(world, api_client_for, action, role):
    user = None if role == "anonymous" else world["people"][role]
    method, url, body = request_for(world, action)
    response = getattr(api_client_for(user), method)(url, body, format="json")
    assert response.status_code == MATRIX[action][ROLES.index(role)], response.content[:300]


def test_endpoint_output_names_the_key_variable_and_never_a_key(world, api_client_for, monkeypatch, settings):
    settings.TATCURATE_ENDPOINT_HOSTS = ["api.example.com"]  # a hosted endpoint the operator allows
    monkeypatch.setenv("DRAFT_TEST_KEY", "sk-secret-value")
    client = api_client_for(world["people"]["manager"])
    created = client.post(
        f"/api/projects/{world['project'].slug}/endpoints/",
        {"name": "Hosted", "base_url": "https://api.example.com/v1", "model": "big", "api_key_env": "DRAFT_TEST_KEY"},
        format="json",
    ).json()
    assert created["api_key_env"] == "DRAFT_TEST_KEY" and created["key_status"] == "set"
    assert "sk-secret-value" not in str(client.get(f"/api/projects/{world['project'].slug}/endpoints/").content)
    monkeypatch.delenv("DRAFT_TEST_KEY")
    assert client.get(f"/api/endpoints/{created['id']}/").json()["key_status"] == "missing"
    pasted = client.post(
        f"/api/projects/{world['project'].slug}/endpoints/",
        {"name": "Oops", "base_url": "https://api.example.com/v1", "model": "big", "api_key_env": "sk-abc-123"},
        format="json",
    )
    assert pasted.status_code == 400 and "never the key itself" in pasted.json()["detail"]
    assert "sk-abc-123" not in pasted.content.decode()


def test_endpoint_generation_params_are_a_json_object_in_an_api_body(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    url = f"/api/projects/{world['project'].slug}/endpoints/"
    fields = {"name": "Params", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    created = client.post(url, {**fields, "generation_params": {"temperature": 0.2}}, format="json")
    assert created.status_code == 201 and created.json()["generation_params"] == {"temperature": 0.2}
    refused = client.post(url, {**fields, "name": "List", "generation_params": [1]}, format="json")
    assert refused.status_code == 400 and "must be a JSON object" in refused.content.decode()
    edited = client.patch(f"/api/endpoints/{created.json()['id']}/", {"generation_params": {"seed": 3}}, format="json")
    assert edited.status_code == 200 and edited.json()["generation_params"] == {"seed": 3}


@pytest.mark.parametrize(
    ("url", "fault", "kind", "words"),
    [
        ("http://127.0.0.1:9/v1", None, "down", "is unreachable"),
        (None, unauthorized(), "unauthorized", "HTTP 401"),
        (None, garbage(), "garbage", "not a chat completion"),
    ],
)
def test_endpoint_test_reports_down_401_and_garbage_clearly(world, api_client_for, url, fault, kind, words):
    client = api_client_for(world["people"]["manager"])
    with FaultServer(default=fault) as server:
        endpoint = endpoint_on(world["project"], url or server.base_url, name=f"Faulty {kind}")
        body = client.post(f"/api/endpoints/{endpoint.pk}/test/").json()
    assert body["is_ok"] is False and body["kind"] == kind and words in body["message"]


def test_the_endpoint_test_tells_no_open_port_from_a_closed_one(world, api_client_for):
    """Issue 35, defect 1: a port that accepts and says nothing, and one nothing listens on, read alike."""
    client = api_client_for(world["people"]["manager"])
    answers = []
    with silent_port() as silent:
        for name, url in (("Silent", silent), ("Closed", closed_port_url())):
            endpoint = endpoint_on(world["project"], url.removesuffix("/hook") + "/v1", name=name)
            body = client.post(f"/api/endpoints/{endpoint.pk}/test/").json()
            answers.append((body["kind"], body["status"], body["message"].replace(url.removesuffix("/hook"), "URL")))
    assert answers[0] == answers[1] and answers[0][:2] == ("down", None), answers


def test_endpoint_test_reports_latency_and_reply(world, api_client_for):
    body = api_client_for(world["people"]["manager"]).post(f"/api/endpoints/{world['endpoint'].pk}/test/").json()
    assert body["is_ok"] is True and body["status"] == 200 and body["latency_s"] >= 0
    assert body["model"] == "fault-model" and body["reply"]
    assert body["limit_is_shared"] is False or body["limit_is_shared"] is True


def test_run_created_through_the_api_drafts_the_batch(world, api_client_for, django_capture_on_commit_callbacks):
    client = api_client_for(world["people"]["manager"])
    slug = world["project"].slug
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(
            f"/api/projects/{slug}/drafting-runs/",
            {"kind": "llm", "batch": world["run"].batch_id, "endpoint": world["endpoint"].pk},
            format="json",
        )
    assert created.status_code == 201
    detail = client.get(f"/api/drafting-runs/{created.json()['id']}/").json()
    assert detail["status"] == DraftingRun.Status.COMPLETED
    assert detail["counts"]["drafted"] == 3 and len(detail["items"]) == 3
    assert Instance.objects.filter(draft__run=detail["id"]).count() == 3


def test_new_template_version_is_used_by_later_runs(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    slug = world["project"].slug
    text = "Q: {{question}}\n{{context}}\nReason:"
    saved = client.post(f"/api/projects/{slug}/prompt-templates/", {"kind": "rationale_answer", "text": text}).json()
    versions = client.get(f"/api/projects/{slug}/prompt-templates/").json()
    answer_versions = [t["content_hash"] for t in versions if t["kind"] == "rationale_answer"]
    assert len(answer_versions) == 2 and answer_versions[0] == saved["content_hash"]
    run = client.post(
        f"/api/projects/{slug}/drafting-runs/",
        {"kind": "llm", "batch": world["run"].batch_id, "endpoint": world["endpoint"].pk},
        format="json",
    ).json()
    assert run["template_hashes"]["rationale_answer"] == saved["content_hash"]
    bad = client.post(f"/api/projects/{slug}/prompt-templates/", {"kind": "rationale_answer", "text": "no slots"})
    assert bad.status_code == 400

"""Scoring API: every endpoint × every role, and what the unqualified annotator must never see (gold answers)."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from scoring.models import ErrorTag, Prediction, ScoringRun
from scoring.runs.uploads import upload_run_create
from tests.scoring.run_support import endpoint_for, small_release
from tests.support.shared_world import base_world_build, shared_world, world_copy

ROLES = ["annotator", "novice", "verifier", "manager", "outsider", "anonymous"]
SALES_2019 = "f4142349-eb72-49eb-9a76-f3ccb1010cbc"


def jsonl(rows: list[dict]) -> bytes:
    return "\n".join(json.dumps(row) for row in rows).encode()


@pytest.fixture(scope="module")
def _world(django_db_setup, django_db_blocker):
    """Built once for the module; each test runs in a savepoint rolled back after it (tests/support/shared_world.py)."""
    from scoring.runs import tasks

    with shared_world(django_db_blocker) as monkeypatch:
        monkeypatch.setattr(tasks.run_chunk_task, "apply_async", lambda *a, **k: None)  # as `sent` does per test
        base = base_world_build()
        project = base["project"]
        release = small_release(project, questions=4)
        endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
        content = jsonl([{"uid": SALES_2019, "answer": ["2019"]}, {"uid": "unknown", "answer": ["x"]}])
        run = upload_run_create(release=release, actor=None, format="jsonl", name="preds.jsonl", content=content)
        prediction = Prediction.objects.get(run=run, uid=SALES_2019)
        yield {
            "project": project,
            "personas": base["personas"],
            "release": release,
            "endpoint": endpoint,
            "run": run,
            "prediction": prediction,
        }


@pytest.fixture
def world(_world, db, sent):
    return world_copy(_world)


@pytest.fixture
def project(world):
    return world["project"]


@pytest.fixture
def personas(world):
    return world["personas"]


def request_for(world, name: str):
    slug, release, run, prediction = world["project"].slug, world["release"], world["run"], world["prediction"]
    upload = SimpleUploadedFile("p.jsonl", jsonl([{"uid": SALES_2019, "answer": ["2018"]}]))
    start = {"release": release.pk, "endpoint": world["endpoint"].pk, "method": "cot", "limit": 2}
    gold = SimpleUploadedFile("gold.json", json.dumps([{"id": "1", "answer": ["a"]}]).encode())
    predicted = SimpleUploadedFile("pred.json", json.dumps({"1": ["a"]}).encode())
    return {
        "runs:list": ("get", f"/api/projects/{slug}/scoring-runs/", None, "json"),
        "runs:start": ("post", f"/api/projects/{slug}/scoring-runs/", start, "json"),
        "runs:detail": ("get", f"/api/scoring-runs/{run.pk}/", None, "json"),
        "runs:retry": ("post", f"/api/scoring-runs/{run.pk}/retry-failed/", None, "json"),
        "runs:predictions": ("get", f"/api/scoring-runs/{run.pk}/predictions/", None, "json"),
        "runs:export": ("get", f"/api/scoring-runs/{run.pk}/export/csv/", None, "json"),
        "prediction:detail": ("get", f"/api/predictions/{prediction.pk}/", None, "json"),
        "prediction:tag": ("put", f"/api/predictions/{prediction.pk}/error-tag/", {"kind": "grounding"}, "json"),
        "runs:upload": (
            "post",
            f"/api/projects/{slug}/scoring-runs/upload/",
            {"release": release.pk, "format": "jsonl", "file": upload},
            "multipart",
        ),
        "compare": ("get", f"/api/releases/{release.pk}/scoring-comparison/", None, "json"),
        "compare:latex": ("get", f"/api/releases/{release.pk}/scoring-comparison/table5/tex/", None, "json"),
        "official": (
            "post",
            "/api/scoring/official-figures/",
            {"benchmark": "scitat", "gold": gold, "predictions": predicted},
            "multipart",
        ),
    }[name]


# In ROLES order: qualified annotator, unqualified annotator, verifier, manager, outsider, anonymous.
MATRIX = {
    "runs:list": (200, 200, 200, 200, 404, 401),
    "runs:start": (403, 403, 201, 201, 404, 401),
    "runs:detail": (200, 200, 200, 200, 404, 401),
    "runs:retry": (403, 403, 200, 200, 404, 401),
    "runs:predictions": (200, 403, 200, 200, 404, 401),
    "runs:export": (200, 403, 200, 200, 404, 401),
    "prediction:detail": (200, 403, 200, 200, 404, 401),
    "prediction:tag": (200, 403, 200, 200, 404, 401),
    "runs:upload": (403, 403, 201, 201, 404, 401),
    "compare": (200, 200, 200, 200, 404, 401),
    "compare:latex": (200, 200, 200, 200, 404, 401),
    "official": (200, 200, 200, 200, 200, 401),
}


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", sorted(MATRIX))
@pytest.mark.parametrize("role", ROLES)
def test_permission_matrix(world, personas, api_client_for, endpoint, role):
    if endpoint == "runs:retry":
        # Retrying needs failed predictions to retry.
        Prediction.objects.filter(run=world["run"]).exclude(uid=SALES_2019).update(status="failed", error="x")
    method, url, body, fmt = request_for(world, endpoint)
    client = api_client_for(None if role == "anonymous" else personas[role])
    response = getattr(client, method)(url, body, format=fmt)
    expected = MATRIX[endpoint][ROLES.index(role)]
    assert response.status_code == expected, (endpoint, role, response.status_code, getattr(response, "data", ""))


@pytest.mark.django_db
def test_an_uploaded_file_is_scored_against_the_release_with_unanswered_items_counted_wrong(world):
    run = world["run"]
    assert run.status == "completed" and run.method == "upload"
    assert Prediction.objects.filter(run=run).count() == 4
    right = world["prediction"]
    assert right.answer == ["2019"] and right.is_correct and right.metrics["tatqa_em"] == 1.0
    missing = Prediction.objects.filter(run=run).exclude(uid=SALES_2019)
    assert all(not p.is_correct and p.error for p in missing)
    assert run.results["figures"]["em"]["count"] == 3 and run.results["figures"]["em"]["mean"] == pytest.approx(1 / 3)


@pytest.mark.django_db
def test_unqualified_annotator_sees_aggregates_but_never_a_gold_answer(world, personas, api_client_for):
    client = api_client_for(personas["novice"])
    detail = client.get(f"/api/scoring-runs/{world['run'].pk}/")
    assert detail.status_code == 200 and "results" in detail.data
    # The headline is the release format's own metric, named: TAT-QA EM over all 4 questions (1 right).
    headline = detail.data["results"]["headline"]
    assert headline["benchmark"] == "TAT-QA"
    assert [(f["label"], f["count"]) for f in headline["figures"]] == [
        ("TAT-QA EM (with scale)", 4),
        ("TAT-QA F1 (with scale)", 4),
    ]
    assert headline["figures"][0]["mean"] == pytest.approx(1 / 4)
    gold = "1,496.5"
    for url in (
        f"/api/scoring-runs/{world['run'].pk}/",
        f"/api/projects/{world['project'].slug}/scoring-runs/",
        f"/api/releases/{world['release'].pk}/scoring-comparison/",
    ):
        assert gold not in json.dumps(client.get(url).data, default=str)


@pytest.mark.django_db
def test_starting_a_run_sends_one_task_per_chunk_with_ids_only(
    world, personas, api_client_for, sent, django_capture_on_commit_callbacks
):
    client = api_client_for(personas["verifier"])
    body = {"release": world["release"].pk, "endpoint": world["endpoint"].pk, "method": "tool", "chunk_size": 1}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/projects/{world['project'].slug}/scoring-runs/", body, format="json")
    assert response.status_code == 201, response.data
    run = ScoringRun.objects.get(pk=response.data["id"])
    assert run.status == "running" and run.chunks.count() == 4
    assert sorted(message["args"][0] for message in sent) == sorted(run.chunks.values_list("pk", flat=True))
    assert len(run.config_hash) == 64 and run.templates.keys() == {"tool_system", "tool_user"}


@pytest.mark.django_db
def test_same_configuration_gives_the_same_hash_and_a_template_edit_changes_it(world, personas):
    from scoring.runs.creation import run_create

    common = {"release": world["release"], "actor": personas["manager"], "method": "car", "endpoint": world["endpoint"]}
    first, second = run_create(**common), run_create(**common)
    edited = run_create(**common, templates={"reasoner": "Tips: {Tips}\nQuestion: {Question}"})
    assert first.config_hash == second.config_hash != edited.config_hash
    assert edited.templates["reasoner"].startswith("Tips:")


@pytest.mark.django_db
def test_error_tags_are_one_per_person_and_custom_needs_a_name(world, personas, api_client_for):
    url = f"/api/predictions/{world['prediction'].pk}/error-tag/"
    client = api_client_for(personas["verifier"])
    assert client.put(url, {"kind": "custom"}, format="json").status_code == 400
    assert client.put(url, {"kind": "calculation"}, format="json").status_code == 200
    assert client.put(url, {"kind": "custom", "custom_label": "Unit"}, format="json").data["label"] == "Unit"
    assert ErrorTag.objects.filter(prediction=world["prediction"]).count() == 1
    detail = client.get(f"/api/scoring-runs/{world['run'].pk}/").data
    assert detail["error_types"]["short_form"] == {"Unit": 1}
    assert client.delete(url).status_code == 204


@pytest.mark.django_db
def test_pause_resume_cancel_follow_the_status_rules(
    world, personas, api_client_for, sent, django_capture_on_commit_callbacks
):
    from scoring.runs.creation import run_create
    from scoring.runs.lifecycle import run_start

    run = run_create(release=world["release"], actor=None, method="direct", endpoint=world["endpoint"])
    run_start(run=run, actor=None)
    client = api_client_for(personas["manager"])
    assert client.post(f"/api/scoring-runs/{run.pk}/resume/").status_code == 409
    assert client.post(f"/api/scoring-runs/{run.pk}/pause/").data["status"] == "paused"
    before = len(sent)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/api/scoring-runs/{run.pk}/resume/").data["status"] == "running"
    assert len(sent) > before  # unfinished chunks were sent again
    assert client.post(f"/api/scoring-runs/{run.pk}/cancel/").data["status"] == "cancelled"
    assert client.post(f"/api/scoring-runs/{run.pk}/pause/").status_code == 409
    assert client.post(f"/api/scoring-runs/{run.pk}/explode/").status_code == 404


@pytest.mark.django_db
def test_exports_hold_one_record_per_prediction(world, personas, api_client_for):
    client = api_client_for(personas["manager"])
    csv_text = client.get(f"/api/scoring-runs/{world['run'].pk}/export/csv/").content.decode()
    assert csv_text.splitlines()[0].startswith("uid,status,answer") and len(csv_text.splitlines()) == 5
    data = json.loads(client.get(f"/api/scoring-runs/{world['run'].pk}/export/json/").content)
    assert len(data["predictions"]) == 4 and data["run"]["config_hash"] == world["run"].config_hash


@pytest.mark.django_db
def test_official_figures_of_a_tatqa_pair_match_the_sample_prediction_file(personas, api_client_for):
    from tests.scoring.metrics.shared_data import shared_data_dir

    data = shared_data_dir() / "tatqa"
    client = api_client_for(personas["annotator"])
    response = client.post(
        "/api/scoring/official-figures/",
        {
            "benchmark": "tatqa",
            "gold": SimpleUploadedFile("gold.json", (data / "tatqa_dataset_dev.json").read_bytes()),
            "predictions": SimpleUploadedFile("pred.json", (data / "sample_prediction.json").read_bytes()),
        },
        format="multipart",
    )
    assert response.status_code == 200, response.data
    assert response.data["count"] > 1000 and any(line.startswith("Exact-match") for line in response.data["lines"])

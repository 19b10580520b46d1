"""Release and import API × every role: who gets 2xx, 403, 404 or 401; gold answers only for qualified people."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from curation.releases.services.cut import release_cut
from curation.releases.services.exports import export_request

ROLES = ["annotator", "novice", "verifier", "manager", "outsider", "anonymous"]
TATQA_FILE = [
    {
        "table": {"uid": "t-api", "table": [["", "2019"], ["Revenue", "10"]]},
        "paragraphs": [{"uid": "p-api", "order": 1, "text": "Revenue grew."}],
        "questions": [
            {
                "uid": "q-api",
                "order": 1,
                "question": "Revenue in 2019?",
                "answer": ["10"],
                "derivation": "",
                "answer_type": "span",
                "answer_from": "table",
                "rel_paragraphs": [],
                "req_comparison": False,
                "scale": "",
            }
        ],
    }
]


@pytest.fixture
def world(release_world, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    release = release_cut(
        project=release_world["project"], actor=None, name="demo", batch_ids=[release_world["batches"][0].pk]
    )
    export_request(release=release, actor=None, format="csv")
    return {**release_world, "release": release}


def request_for(world, name: str):
    slug = world["project"].slug
    pk = world["release"].pk
    upload = SimpleUploadedFile("mini.json", json.dumps(TATQA_FILE).encode(), content_type="application/json")
    return {
        "releases:list": ("get", f"/api/projects/{slug}/releases/", None, "json"),
        "releases:cut": (
            "post",
            f"/api/projects/{slug}/releases/",
            {"name": "demo", "batch_ids": [world["batches"][1].pk]},
            "json",
        ),
        "release:detail": ("get", f"/api/releases/{pk}/", None, "json"),
        "release:statistics": ("get", f"/api/releases/{pk}/statistics/", None, "json"),
        "release:items": ("get", f"/api/releases/{pk}/items/", None, "json"),
        "exports:list": ("get", f"/api/releases/{pk}/exports/", None, "json"),
        "exports:request": ("post", f"/api/releases/{pk}/exports/", {"format": "scitat"}, "json"),
        "exports:download": ("get", f"/api/releases/{pk}/exports/csv/download/", None, "json"),
        "imports:list": ("get", f"/api/projects/{slug}/imports/", None, "json"),
        "imports:upload": ("post", f"/api/projects/{slug}/imports/", {"format": "tatqa", "file": upload}, "multipart"),
    }[name]


MATRIX = {
    #                     annotator novice verifier manager outsider anonymous
    "releases:list": (200, 200, 200, 200, 404, 401),
    "releases:cut": (403, 403, 403, 201, 404, 401),
    "release:detail": (200, 200, 200, 200, 404, 401),
    "release:statistics": (200, 200, 200, 200, 404, 401),
    "release:items": (200, 403, 200, 200, 404, 401),
    "exports:list": (200, 200, 200, 200, 404, 401),
    "exports:request": (200, 403, 200, 200, 404, 401),
    "exports:download": (200, 403, 200, 200, 404, 401),
    "imports:list": (403, 403, 403, 200, 404, 401),
    "imports:upload": (403, 403, 403, 201, 404, 401),
}


@pytest.mark.parametrize("endpoint", sorted(MATRIX))
@pytest.mark.parametrize("role", ROLES)
def test_permission_matrix(world, api_client_for, endpoint, role):
    user = None if role == "anonymous" else world["people"][role]
    method, url, body, fmt = request_for(world, endpoint)
    response = getattr(api_client_for(user), method)(url, body, format=fmt)
    expected = MATRIX[endpoint][ROLES.index(role)]
    assert response.status_code == expected, (response.status_code, getattr(response, "content", b"")[:300])


def test_unqualified_annotator_never_receives_gold_answers(world, api_client_for):
    client = api_client_for(world["people"]["novice"])
    detail = client.get(f"/api/releases/{world['release'].pk}/").json()
    statistics = client.get(f"/api/releases/{world['release'].pk}/statistics/").json()
    assert "items" not in detail and detail["item_count"] == 4
    assert statistics["questions"] == 4
    assert '"answer"' not in json.dumps(detail) and '"answer"' not in json.dumps(statistics)


def test_items_and_download_carry_the_frozen_data(world, api_client_for):
    client = api_client_for(world["people"]["verifier"])
    items = client.get(f"/api/releases/{world['release'].pk}/items/").json()
    assert items["count"] == 4 and items["results"][0]["data"]["answer"] == ["A"]
    # Paged as every list is: the second item alone, and a link on to the third.
    second = client.get(f"/api/releases/{world['release'].pk}/items/?limit=1&offset=1").json()
    assert [item["position"] for item in second["results"]] == [items["results"][1]["position"]]
    assert "offset=2" in second["next"]
    response = client.get(f"/api/releases/{world['release'].pk}/exports/csv/download/")
    assert response["Content-Type"] == "application/zip"
    assert b"".join(response.streaming_content)[:2] == b"PK"


def test_cut_through_the_api_validates_and_reports(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    url = f"/api/projects/{world['project'].slug}/releases/"
    refused = client.post(url, {"name": "demo", "batch_ids": [world["batches"][0].pk]}, format="json")
    assert refused.status_code == 400 and "no validated instances" in refused.json()["detail"]
    created = client.post(url, {"name": "demo", "batch_ids": [world["batches"][1].pk], "split_seed": 1}, format="json")
    assert created.status_code == 201
    assert created.json()["version"] == 2 and created.json()["supersedes"] == world["release"].pk
    assert created.json()["statistics"]["questions"] == 2


def test_malformed_upload_is_400_with_the_json_path(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    bad = json.loads(json.dumps(TATQA_FILE))
    bad[0]["questions"][0]["answer_type"] = "guess"
    upload = SimpleUploadedFile("bad.json", json.dumps(bad).encode())
    response = client.post(
        f"/api/projects/{world['project'].slug}/imports/", {"format": "tatqa", "file": upload}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json()["path"] == "[0].questions[0].answer_type"


def test_upload_of_questions_without_answers_says_how_many_came_in_as_drafts(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    unlabelled = json.loads(json.dumps(TATQA_FILE))
    for document in unlabelled:
        document["table"]["uid"] += "-unlabelled"
        document["questions"] = [
            {"uid": f"{q['uid']}-x", "order": q.get("order", 1), "question": q["question"]}
            for q in document["questions"]
        ]
    upload = SimpleUploadedFile("test.json", json.dumps(unlabelled).encode())
    response = client.post(
        f"/api/projects/{world['project'].slug}/imports/", {"format": "tatqa", "file": upload}, format="multipart"
    )
    questions = sum(len(d["questions"]) for d in unlabelled)
    assert response.status_code == 201
    assert response.json()["counts"]["drafts"] == questions
    assert f"0 validated, {questions} as drafts to annotate" in response.json()["summary"]


def test_releases_cannot_be_edited_or_deleted_through_the_api(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    url = f"/api/releases/{world['release'].pk}/"
    assert client.patch(url, {"description": "changed"}, format="json").status_code == 405
    assert client.put(url, {"description": "changed"}, format="json").status_code == 405
    assert client.delete(url).status_code == 405


def test_the_api_cuts_every_waiting_batch_or_typed_ranges(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    url = f"/api/projects/{world['project'].slug}/releases/"
    second = world["batches"][1]
    refused = client.post(url, {"name": "both", "batches": "all", "batch_ids": [second.pk]}, format="json")
    assert refused.status_code == 400 and "not both" in json.dumps(refused.json())
    backwards = client.post(url, {"name": "back", "batches": f"{second.number}-1"}, format="json")
    assert backwards.status_code == 400 and "runs backwards" in json.dumps(backwards.json())
    created = client.post(url, {"name": "every", "batches": "all"}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["item_count"] == 2 and created.json()["batches"] == [second.pk]

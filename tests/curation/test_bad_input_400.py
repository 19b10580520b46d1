"""Issue 19.7: bad input answers 400 naming what is wrong, never 500 — huge ?limit/offset, NaN/Infinity in an
import, deeply nested JSON in an import, in a JSON body and in the official-figures upload. Nothing is written."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from curation.datasets.models import ImportRecord
from curation.models import Instance
from curation.pagination import MAX_LIMIT, MAX_OFFSET, BoundedLimitOffsetPagination
from curation.toolkit.strict_json import MAX_DEPTH, JsonInputError, json_loads_strict
from tests.curation.releases.test_release_api import TATQA_FILE

NESTED = "[" * 100_000 + "]" * 100_000  # past the C decoder's recursion limit
JUST_TOO_DEEP = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)  # parses, but deeper than we accept


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused_with_their_path(constant):
    with pytest.raises(JsonInputError) as caught:
        json_loads_strict('{"questions": [{"answer": [1, ' + constant + "]}]}")
    assert caught.value.path == "$.questions[0].answer[1]"
    assert "not a finite number" in str(caught.value)


@pytest.mark.parametrize("text", [NESTED, JUST_TOO_DEEP])
def test_deep_nesting_is_refused(text):
    with pytest.raises(JsonInputError, match=f"nested deeper than {MAX_DEPTH} levels"):
        json_loads_strict(text)


def test_ordinary_json_passes_unchanged():
    assert json_loads_strict('{"a": [1, 2.5, "x", null, {"b": true}]}') == {"a": [1, 2.5, "x", None, {"b": True}]}


def _import(client, project, content: bytes):
    upload = SimpleUploadedFile("bad.json", content, content_type="application/json")
    return client.post(
        f"/api/projects/{project.slug}/imports/", {"format": "tatqa", "file": upload}, format="multipart"
    )


@pytest.mark.parametrize("constant", ["NaN", "Infinity"])
def test_a_dataset_import_with_nan_is_400_naming_the_field(personas, project, api_client_for, constant):
    text = json.dumps(TATQA_FILE).replace('"order": 1, "question"', f'"order": {constant}, "question"')
    assert constant in text
    response = _import(api_client_for(personas["manager"]), project, text.encode())
    assert response.status_code == 400, response.content
    assert response.json()["path"] == "$[0].questions[0].order"
    assert not ImportRecord.objects.exists() and not Instance.objects.exists()


def test_a_deeply_nested_dataset_import_is_400(personas, project, api_client_for):
    response = _import(api_client_for(personas["manager"]), project, NESTED.encode())
    assert response.status_code == 400 and "nested deeper" in response.json()["detail"]
    assert not ImportRecord.objects.exists()


@pytest.mark.parametrize("which", ["gold", "predictions"])
def test_the_official_figures_endpoint_refuses_deep_nesting_and_a_nan_gold(personas, api_client_for, which):
    files = {"gold": json.dumps(TATQA_FILE), "predictions": json.dumps({"q-api": ["10", ""]})}
    client = api_client_for(personas["manager"])
    body = {name: SimpleUploadedFile(f"{name}.json", text.encode()) for name, text in files.items()}
    assert client.post("/api/scoring/official-figures/", {"benchmark": "tatqa", **body}).status_code == 200
    # A NaN prediction is scored as a wrong row, as tatqa_eval.py does; a NaN in the gold file is refused.
    nan_gold = files["gold"].replace('"order": 1', '"order": NaN', 1)
    for bad in (NESTED, '{"q-api": [NaN, ""]}' if which == "predictions" else nan_gold):
        body = {name: SimpleUploadedFile(f"{name}.json", text.encode()) for name, text in files.items()}
        body[which] = SimpleUploadedFile(f"{which}.json", bad.encode())
        response = client.post("/api/scoring/official-figures/", {"benchmark": "tatqa", **body}, format="multipart")
        if bad.startswith('{"q-api": [NaN'):
            assert response.status_code == 200, response.content
            assert response.json()["summary"]["non_finite_uids"] == ["q-api"]
            continue
        assert response.status_code == 400, response.content
        assert "nested deeper" in response.json()["detail"] or "not a finite number" in response.json()["detail"]


def test_a_deeply_nested_or_nan_json_body_is_400(personas, project, api_client_for):
    client = api_client_for(personas["manager"])
    url = f"/api/projects/{project.slug}/instances/bulk/"
    for body in (NESTED, '{"action": "discard", "instance_ids": [NaN]}'):
        response = client.generic("POST", url, body, content_type="application/json")
        assert response.status_code == 400, response.content
        assert "JSON parse error" in response.json()["detail"]


def test_a_huge_limit_is_clamped_and_a_huge_offset_is_400(personas, project, drafts, api_client_for):
    client = api_client_for(personas["manager"])
    url = f"/api/projects/{project.slug}/instances/"
    clamped = client.get(url, {"limit": str(10**30)})
    assert clamped.status_code == 200 and len(clamped.json()["results"]) == len(drafts)
    assert BoundedLimitOffsetPagination().get_limit(Request(APIRequestFactory().get(url, {"limit": "9" * 40}))) == (
        MAX_LIMIT
    )
    refused = client.get(url, {"offset": str(10**30)})
    assert refused.status_code == 400 and "offset" in refused.json()
    assert client.get(url, {"offset": str(MAX_OFFSET)}).json()["results"] == []

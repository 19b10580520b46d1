"""Every door that reads an uploaded file whole refuses one over TATCURATE_MAX_UPLOAD_BYTES with a 400 (or a page
message) naming the file, and reads and writes nothing (issue 19.3: no door reads an oversized file, or cuts it).
Paper sources are checked at their own door and read by a worker (test_ingest_api.py, test_ingest_worker.py)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from curation.models import Instance
from scoring.runs.models import ScoringRun
from tests.scoring.run_support import small_release

LIMIT = 1024


def big(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, b"{}\n" * LIMIT)


@pytest.fixture
def limited(settings):
    settings.TATCURATE_MAX_UPLOAD_BYTES = LIMIT


def test_the_draft_import_api_refuses_an_oversized_file(project, personas, api_client_for, limited):
    client = api_client_for(personas["manager"])
    body = {"file": big("drafts.jsonl"), "file_format": "jsonl"}
    response = client.post(f"/api/projects/{project.slug}/drafts/import/", body, format="multipart")
    assert response.status_code == 400
    assert "drafts.jsonl" in response.json()["detail"] and f"{LIMIT}-byte upload limit" in response.json()["detail"]
    assert not Instance.objects.exists()


def test_the_predictions_upload_api_refuses_an_oversized_file(project, personas, api_client_for, limited):
    release = small_release(project, questions=2)
    client = api_client_for(personas["manager"])
    body = {"release": release.pk, "format": "jsonl", "file": big("preds.jsonl")}
    response = client.post(f"/api/projects/{project.slug}/scoring-runs/upload/", body, format="multipart")
    assert response.status_code == 400 and "preds.jsonl" in response.json()["detail"]
    assert not ScoringRun.objects.exists()


def test_the_predictions_upload_page_refuses_an_oversized_file(project, personas, limited):
    release = small_release(project, questions=2)
    browser = Client()
    browser.force_login(personas["manager"])
    url = f"/p/{project.slug}/releases/{release.pk}/score/upload/"
    page = browser.post(url, {"format": "jsonl", "file": big("preds.jsonl")}, follow=True).content.decode()
    assert "preds.jsonl: the file is" in page and f"{LIMIT}-byte upload limit" in page
    assert not ScoringRun.objects.exists()


def test_official_figures_refuse_an_oversized_file_on_the_api_and_the_page(project, personas, api_client_for, limited):
    small = SimpleUploadedFile("gold.json", b"[]")
    body = {"benchmark": "tatqa", "gold": small, "predictions": big("preds.json")}
    response = api_client_for(personas["manager"]).post("/api/scoring/official-figures/", body, format="multipart")
    assert response.status_code == 400 and "preds.json" in response.json()["detail"]
    browser = Client()
    browser.force_login(personas["manager"])
    body = {"benchmark": "tatqa", "gold": SimpleUploadedFile("gold.json", b"[]"), "predictions": big("preds.json")}
    page = browser.post(f"/p/{project.slug}/scoring/official/", body, follow=True).content.decode()
    assert "preds.json: the file is" in page

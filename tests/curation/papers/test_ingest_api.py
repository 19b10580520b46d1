"""Ingestion and context API: every endpoint × every role, uploads (202 with the job, 400 with reasons at the door,
the job's reasons afterwards), assignment."""

from __future__ import annotations

import gzip

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from curation.models import Context, Paper, ReasoningType
from curation.papers.models import IngestJob
from curation.papers.services import paper_ingest
from curation.services.lifecycle import instance_create
from tests.curation.papers.ingest_helpers import FIXTURES, PAPER, row_counts, run_pending_ingestions, tar_gz
from tests.factories import PaperFactory

ROLES = ["annotator", "verifier", "manager", "outsider", "anonymous"]


@pytest.fixture
def world(project, personas):
    """An ingested paper; the annotator authors an instance on one of its short contexts."""
    paper = paper_ingest(project=project, actor=None, path_or_upload=FIXTURES / "multifile").paper
    shorts = list(Context.objects.filter(paper=paper, kind=Context.Kind.SHORT).order_by("pk"))
    instance_create(project_id=project.pk, actor=None, context=shorts[0], author=personas["annotator"])
    return {"project": project, "paper": paper, "mine": shorts[0], "other": shorts[1], "people": personas}


def upload(name: str = "paper.tex", content: bytes = PAPER.encode()) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content)


def request_for(world, name: str):
    slug = world["project"].slug
    mine = world["mine"].pk
    return {
        "papers:list": ("get", f"/api/projects/{slug}/papers/", None),
        "papers:upload": ("post", f"/api/projects/{slug}/papers/", {"files": [upload()]}),
        "contexts:list": ("get", f"/api/projects/{slug}/contexts/", None),
        "contexts:assign": ("post", f"/api/projects/{slug}/contexts/assign-reasoning-types/", {"seed": 3}),
        "context:detail": ("get", f"/api/contexts/{mine}/", None),
        "context:update": ("patch", f"/api/contexts/{mine}/", {"reasoning_type": "counting"}),
    }[name]


MATRIX = {
    "papers:list": (200, 200, 200, 404, 401),
    "papers:upload": (403, 403, 202, 404, 401),
    "contexts:list": (200, 200, 200, 404, 401),
    "contexts:assign": (403, 403, 200, 404, 401),
    "context:detail": (200, 200, 200, 404, 401),  # the annotator sees the context of their own instance
    "context:update": (403, 403, 200, 404, 401),
}


@pytest.mark.parametrize("endpoint", list(MATRIX))
@pytest.mark.parametrize("role_index", range(len(ROLES)), ids=ROLES)
def test_role_by_action(world, api_client_for, endpoint, role_index):
    role = ROLES[role_index]
    user = None if role == "anonymous" else world["people"][role]
    method, url, body = request_for(world, endpoint)
    client = api_client_for(user)
    fmt = "multipart" if endpoint == "papers:upload" else "json"
    response = getattr(client, method)(url, body, format=fmt) if body is not None else getattr(client, method)(url)
    assert response.status_code == MATRIX[endpoint][role_index], response.content


def test_annotator_lists_only_contexts_of_their_work_and_no_papers(world, api_client_for):
    client = api_client_for(world["people"]["annotator"])
    slug = world["project"].slug
    contexts = client.get(f"/api/projects/{slug}/contexts/").json()
    assert [c["id"] for c in contexts["results"]] == [world["mine"].pk]
    assert client.get(f"/api/projects/{slug}/papers/").json()["results"] == []
    assert client.get(f"/api/contexts/{world['other'].pk}/").status_code == 404


def test_project_papers_list_pages_with_a_next_link_newest_first(world, api_client_for):
    project = world["project"]
    later = [PaperFactory(project=project, title=f"Later {n}", source_name=f"later-{n}.tex") for n in range(2)]
    client = api_client_for(world["people"]["manager"])
    first = client.get(f"/api/projects/{project.slug}/papers/?limit=2").json()
    assert first["count"] == 3
    assert [p["id"] for p in first["results"]] == [later[1].pk, later[0].pk]
    assert "offset=2" in first["next"] and first["previous"] is None
    rest = client.get(first["next"]).json()
    assert [p["id"] for p in rest["results"]] == [world["paper"].pk] and rest["next"] is None


def test_project_papers_list_schema_documents_the_paged_envelope(db):
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    response = schema["paths"]["/api/projects/{slug}/papers/"]["get"]["responses"]["200"]
    envelope = response["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert envelope == "PaginatedPaperList"
    assert {"count", "next", "previous", "results"} <= set(schema["components"]["schemas"][envelope]["properties"])


def test_upload_answers_202_with_the_job_and_the_job_reports_a_result_per_file(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    slug = world["project"].slug
    packed = gzip.compress(PAPER.encode())
    files = [upload("2401.01234v2.gz", packed), upload("other.tex", PAPER.encode() + b"%")]
    before = row_counts()
    response = client.post(f"/api/projects/{slug}/papers/", {"files": files}, format="multipart")
    assert response.status_code == 202, response.content
    job = response.json()
    assert response["Location"] == job["url"] == f"/api/ingestions/{job['id']}/"
    assert (job["state"], job["stage"], job["files_total"], job["results"]) == ("pending", "stored", 2, [])
    assert [item["name"] for item in job["files"]] == ["2401.01234v2.gz", "other.tex"]
    assert row_counts() == before  # nothing is read in the request
    run_pending_ingestions()
    body = client.get(job["url"]).json()
    assert (body["state"], body["stage"], body["percent"], body["error"]) == ("done", "done", 100, "")
    assert [item["source_name"] for item in body["results"]] == ["2401.01234v2.gz", "other.tex"]
    assert body["results"][0]["status"] == "created" and body["results"][0]["arxiv_id"] == "2401.01234v2"
    assert body["results"][0]["tables"] == 2 and body["results"][0]["contexts"] == {"short": 2, "long": 1}
    assert body["tables_found"] == 4 and body["files_done"] == 2
    same = upload("2401.01234v2.gz", packed)
    again = client.post(f"/api/projects/{slug}/papers/", {"files": [same]}, format="multipart")
    assert again.status_code == 202
    run_pending_ingestions()
    assert client.get(again.json()["url"]).json()["results"][0]["status"] == "unchanged"


def test_an_unsafe_archive_fails_its_job_with_the_reason_and_writes_nothing(world, api_client_for, tmp_path):
    client = api_client_for(world["people"]["manager"])
    slug = world["project"].slug
    bad = tar_gz(tmp_path / "evil.tar.gz", {"../escape.tex": PAPER})
    before = row_counts()
    files = [upload("fine.tex"), SimpleUploadedFile("evil.tar.gz", bad.read_bytes())]
    response = client.post(f"/api/projects/{slug}/papers/", {"files": files}, format="multipart")
    assert response.status_code == 202
    run_pending_ingestions()
    body = client.get(response.json()["url"]).json()
    assert body["state"] == "failed" and body["limit"] == "refused"
    assert body["rejected"][0]["source_name"] == "evil.tar.gz"
    assert "traversal" in body["rejected"][0]["reason"] and "Nothing was stored" in body["error"]
    assert row_counts() == before


def test_a_pdf_among_the_uploads_is_400_at_the_door_and_stores_no_file(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    files = [upload("fine.tex"), upload("paper.pdf", b"%PDF-1.7 compiled")]
    response = client.post(f"/api/projects/{world['project'].slug}/papers/", {"files": files}, format="multipart")
    assert response.status_code == 400
    body = response.json()
    assert [item["source_name"] for item in body["rejected"]] == ["paper.pdf"] and "is a PDF" in body["detail"]
    assert not IngestJob.objects.exists()


def test_oversize_upload_is_400(world, api_client_for, settings):
    settings.TATCURATE_MAX_UPLOAD_BYTES = 1024
    client = api_client_for(world["people"]["manager"])
    response = client.post(
        f"/api/projects/{world['project'].slug}/papers/",
        {"files": [upload("big.tex", b"%" * 5000)]},
        format="multipart",
    )
    assert response.status_code == 400 and "1024-byte" in response.json()["detail"]


def test_upload_without_files_is_400(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    response = client.post(f"/api/projects/{world['project'].slug}/papers/", {}, format="multipart")
    assert response.status_code == 400
    assert Paper.objects.count() == 1


def test_assign_endpoint_is_deterministic_and_filters(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    slug = world["project"].slug
    first = client.post(f"/api/projects/{slug}/contexts/assign-reasoning-types/", {"seed": 11}, format="json").json()
    assert first["assigned"] == Context.objects.filter(project=world["project"], kind="short").count() == 3
    assert Context.objects.get(project=world["project"], kind="long").reasoning_type is None
    snapshot = dict(Context.objects.values_list("pk", "reasoning_type__code"))
    Context.objects.update(reasoning_type=None)
    client.post(f"/api/projects/{slug}/contexts/assign-reasoning-types/", {"seed": 11}, format="json")
    assert dict(Context.objects.values_list("pk", "reasoning_type__code")) == snapshot
    assert client.get(f"/api/projects/{slug}/contexts/?unassigned=1").json()["count"] == 0
    assert client.get(f"/api/projects/{slug}/contexts/?kind=long").json()["count"] == 1
    missing = client.post(f"/api/projects/{slug}/contexts/assign-reasoning-types/", {"batch": 999}, format="json")
    assert missing.status_code == 404


def test_patch_context_sets_or_refuses_a_type(world, api_client_for):
    client = api_client_for(world["people"]["manager"])
    url = f"/api/contexts/{world['mine'].pk}/"
    assert client.patch(url, {"reasoning_type": "ranking"}, format="json").json()["reasoning_type"] == "ranking"
    assert client.patch(url, {"reasoning_type": "data_analysis"}, format="json").status_code == 400
    assert client.patch(url, {"reasoning_type": "nonsense"}, format="json").status_code == 400
    assert client.patch(url, {"reasoning_type": None}, format="json").json()["reasoning_type"] is None
    assert ReasoningType.objects.filter(code="ranking").exists()

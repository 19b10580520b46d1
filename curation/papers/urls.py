"""URLs of ingestion: paper pages and upload, the papers and contexts API; included by config/urls.py."""

from __future__ import annotations

from django.urls import path

from curation.papers import api as ingest_api
from curation.papers import views as ingest_views

page_patterns = [
    path("p/<slug:slug>/papers/", ingest_views.project_papers, name="project-papers"),
    path("p/<slug:slug>/papers/upload/", ingest_views.papers_upload, name="papers-upload"),
    path("p/<slug:slug>/papers/<int:pk>/", ingest_views.paper_detail, name="paper"),
    path("p/<slug:slug>/papers/ingestions/<int:pk>/", ingest_views.ingest_job_page, name="ingest-job"),
    path("p/<slug:slug>/papers/ingestions/<int:pk>/retry/", ingest_views.ingest_job_retry, name="ingest-job-retry"),
    path(
        "p/<slug:slug>/papers/ingestions/<int:pk>/discard/", ingest_views.ingest_job_discard, name="ingest-job-discard"
    ),
    path("p/<slug:slug>/contexts/assign/", ingest_views.contexts_assign, name="contexts-assign"),
    path("contexts/<int:pk>/reasoning-type/", ingest_views.context_reasoning_type, name="context-reasoning-type"),
]

api_patterns = [
    path("projects/<slug:slug>/papers/", ingest_api.ProjectPaperListApi.as_view(), name="api-project-papers"),
    path("projects/<slug:slug>/contexts/", ingest_api.ContextListApi.as_view(), name="api-contexts"),
    path(
        "projects/<slug:slug>/contexts/assign-reasoning-types/",
        ingest_api.ContextAssignApi.as_view(),
        name="api-contexts-assign",
    ),
    path("contexts/<int:pk>/", ingest_api.ContextDetailApi.as_view(), name="api-context"),
    path("ingestions/<int:pk>/", ingest_api.IngestJobApi.as_view(), name="api-ingest-job"),
    path("ingestions/<int:pk>/retry/", ingest_api.IngestJobRetryApi.as_view(), name="api-ingest-job-retry"),
    path("ingestions/<int:pk>/discard/", ingest_api.IngestJobDiscardApi.as_view(), name="api-ingest-job-discard"),
]

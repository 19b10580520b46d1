"""URLs of ingestion: paper pages and upload, the papers and contexts API; included by curation/urls.py."""

from __future__ import annotations

from django.urls import path

from curation.papers import api as ingest_api
from curation.papers import views as ingest_views

page_patterns = [
    path("p/<slug:slug>/papers/", ingest_views.project_papers, name="project-papers"),
    path("p/<slug:slug>/papers/upload/", ingest_views.papers_upload, name="papers-upload"),
    path("p/<slug:slug>/papers/<int:pk>/", ingest_views.paper_detail, name="paper"),
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
]

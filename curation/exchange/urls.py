"""URLs of draft import and the work-in-progress export: `page_patterns` (root) and `api_patterns` (/api/)."""

from __future__ import annotations

from django.urls import path

from curation.exchange import api as exchange_api
from curation.exchange import views as exchange_views

page_patterns = [
    path("p/<slug:slug>/drafts/import/", exchange_views.draft_import, name="draft-import"),
    path("p/<slug:slug>/work-export/", exchange_views.work_export_page, name="work-export"),
]

api_patterns = [
    path("projects/<slug:slug>/drafts/import/", exchange_api.DraftImportApi.as_view(), name="api-draft-import"),
    path("projects/<slug:slug>/work-export/", exchange_api.WorkExportApi.as_view(), name="api-work-export"),
]

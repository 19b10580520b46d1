"""URL patterns of releases and imports: `page_patterns` (mounted at the root) and `api_patterns` (under /api/)."""

from __future__ import annotations

from django.urls import include, path

from curation.releases import api as release_api
from curation.releases import views as release_views

project_pages = [
    path("releases/", release_views.release_list, name="releases"),
    path("releases/<int:pk>/", release_views.release_detail, name="release"),
    path("releases/near-duplicates/check/", release_views.near_duplicates_check, name="near-duplicates-check"),
    path("releases/near-duplicates/withhold/", release_views.near_duplicates_withhold, name="near-duplicates-withhold"),
    path("releases/<int:pk>/downloads/", release_views.release_downloads, name="release-downloads"),
    path(
        "releases/<int:pk>/downloads/<slug:format>/",
        release_views.release_download_file,
        name="release-download-file",
    ),
    path("imports/", release_views.dataset_import_page, name="dataset-import"),
]

page_patterns = [path("p/<slug:slug>/", include(project_pages))]

api_patterns = [
    path("projects/<slug:slug>/releases/", release_api.ReleaseListApi.as_view(), name="api-releases"),
    path("projects/<slug:slug>/imports/", release_api.ImportListApi.as_view(), name="api-imports"),
    path("import-jobs/<int:pk>/", release_api.ImportJobDetailApi.as_view(), name="api-import-job"),
    path("releases/<int:pk>/", release_api.ReleaseDetailApi.as_view(), name="api-release"),
    path("releases/<int:pk>/statistics/", release_api.ReleaseStatisticsApi.as_view(), name="api-release-statistics"),
    path("releases/<int:pk>/items/", release_api.ReleaseItemListApi.as_view(), name="api-release-items"),
    path("releases/<int:pk>/exports/", release_api.ReleaseExportListApi.as_view(), name="api-release-exports"),
    path(
        "releases/<int:pk>/exports/<slug:export_format>/download/",
        release_api.ReleaseExportDownloadApi.as_view(),
        name="api-release-export-download",
    ),
]

"""URL patterns of scoring: `page_patterns` (mounted at the root) and `api_patterns` (under /api/)."""

from __future__ import annotations

from django.urls import path

from scoring.runs import api, views

page_patterns = [
    path("p/<slug:slug>/releases/<int:pk>/score/", views.release_score, name="release-score"),
    path("p/<slug:slug>/releases/<int:pk>/score/upload/", views.release_upload, name="release-score-upload"),
    path("p/<slug:slug>/releases/<int:pk>/harness/", views.release_harness_tasks, name="release-harness-tasks"),
    path("p/<slug:slug>/releases/<int:pk>/compare/", views.release_compare, name="release-compare"),
    path(
        "p/<slug:slug>/releases/<int:pk>/compare/<slug:table>.<slug:file_format>",
        views.release_compare_file,
        name="release-compare-file",
    ),
    path("p/<slug:slug>/scoring/runs/<int:pk>/", views.run_detail, name="scoring-run"),
    path("p/<slug:slug>/scoring/runs/<int:pk>/progress/", views.run_progress_fragment, name="scoring-run-progress"),
    path(
        "p/<slug:slug>/scoring/runs/<int:pk>/export/<slug:export_format>/", views.run_export, name="scoring-run-export"
    ),
    path("p/<slug:slug>/scoring/predictions/<int:pk>/", views.prediction_detail, name="scoring-prediction"),
    path("p/<slug:slug>/scoring/predictions/<int:pk>/label/", views.prediction_label, name="scoring-prediction-label"),
    path("p/<slug:slug>/scoring/official/", views.official_figures, name="scoring-official"),
]

api_patterns = [
    path("projects/<slug:slug>/scoring-runs/", api.ScoringRunListApi.as_view(), name="api-scoring-runs"),
    path(
        "projects/<slug:slug>/scoring-runs/upload/", api.ScoringPredictionUploadApi.as_view(), name="api-scoring-upload"
    ),
    path("scoring-runs/<int:pk>/", api.ScoringRunDetailApi.as_view(), name="api-scoring-run"),
    path("scoring-runs/<int:pk>/predictions/", api.ScoringPredictionListApi.as_view(), name="api-scoring-predictions"),
    path(
        "scoring-runs/<int:pk>/export/<slug:export_format>/",
        api.ScoringRunExportApi.as_view(),
        name="api-scoring-export",
    ),
    # After the fixed sub-paths: an action is any other last segment.
    path("scoring-runs/<int:pk>/<slug:action>/", api.ScoringRunActionApi.as_view(), name="api-scoring-run-action"),
    path("predictions/<int:pk>/", api.ScoringPredictionDetailApi.as_view(), name="api-scoring-prediction"),
    path("predictions/<int:pk>/error-tag/", api.ScoringErrorTagApi.as_view(), name="api-scoring-error-tag"),
    path("releases/<int:pk>/scoring-comparison/", api.ScoringComparisonApi.as_view(), name="api-scoring-comparison"),
    path(
        "releases/<int:pk>/scoring-comparison/<slug:table>/<slug:file_format>/",
        api.ScoringComparisonFileApi.as_view(),
        name="api-scoring-comparison-file",
    ),
    path("scoring/official-figures/", api.ScoringOfficialFiguresApi.as_view(), name="api-scoring-official"),
]

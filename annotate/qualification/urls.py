"""URLs of the qualification exam and the guidelines: `page_patterns` at the site root, `api_patterns` under /api/."""

from __future__ import annotations

from django.urls import path

from annotate.qualification import api, views

page_patterns = [
    path("p/<slug:slug>/guidelines/", views.guidelines_page, name="guidelines"),
    path("p/<slug:slug>/qualification/", views.qualification_page, name="qualification"),
    path("p/<slug:slug>/qualification/start/", views.qualification_start, name="qualification-start"),
    path("p/<slug:slug>/qualification/manage/", views.qualification_manage, name="qualification-manage"),
    path("p/<slug:slug>/qualification/gold/", views.gold_drafts, name="qualification-gold"),
    path("p/<slug:slug>/qualification/gold/<int:pk>/", views.gold_check, name="qualification-gold-check"),
    path("qualification/attempts/<int:pk>/", views.attempt_page, name="qualification-attempt"),
    path("qualification/attempts/<int:pk>/save/", views.attempt_save, name="qualification-attempt-save"),
    path("qualification/attempts/<int:pk>/submit/", views.attempt_submit, name="qualification-attempt-submit"),
]

api_patterns = [
    path("projects/<slug:slug>/qualification/", api.QualificationSettingsApi.as_view(), name="api-qualification"),
    path(
        "projects/<slug:slug>/qualification/attempts/", api.AttemptListApi.as_view(), name="api-qualification-attempts"
    ),
    path("qualification/attempts/<int:pk>/", api.AttemptDetailApi.as_view(), name="api-qualification-attempt"),
    path(
        "qualification/attempts/<int:pk>/submit/",
        api.AttemptSubmitApi.as_view(),
        name="api-qualification-attempt-submit",
    ),
    path("projects/<slug:slug>/guidelines/", api.GuidelinesApi.as_view(), name="api-guidelines"),
    path("projects/<slug:slug>/guidelines/read/", api.GuidelinesReadApi.as_view(), name="api-guidelines-read"),
]

"""URLs of the managers' decisions on who stays qualified: hidden gold's settings, figures and restore (a probe is
worked on at an instance's URLs), and the vouch."""

from __future__ import annotations

from django.urls import path

from annotate.quality import api as api_quality
from annotate.quality import views as views_quality
from annotate.quality import vouch_views

page_patterns = [
    path("p/<slug:slug>/quality/settings/", views_quality.quality_settings_page, name="quality-settings"),
    path("p/<slug:slug>/quality/restore/<int:user_id>/", views_quality.restore_page, name="quality-restore"),
    path("p/<slug:slug>/vouches/", vouch_views.vouch_create, name="vouch-create"),
    path("p/<slug:slug>/vouches/<int:pk>/revoke/", vouch_views.vouch_revoke, name="vouch-revoke"),
]

api_patterns = [
    path("projects/<slug:slug>/quality/", api_quality.QualitySettingsApi.as_view(), name="api-quality-settings"),
    path("projects/<slug:slug>/quality/gold/", api_quality.GoldFiguresApi.as_view(), name="api-quality-gold"),
    path("projects/<slug:slug>/quality/restore/", api_quality.RestoreApi.as_view(), name="api-quality-restore"),
]

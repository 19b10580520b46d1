"""URLs of hidden gold: the probe page and API, and the managers' settings, figures and restore."""

from __future__ import annotations

from django.urls import path

from annotate.quality import api as api_quality
from annotate.quality import views as views_quality

page_patterns = [
    path("p/<slug:slug>/work/item/<int:pk>/", views_quality.probe_page, name="probe"),
    path("p/<slug:slug>/quality/settings/", views_quality.quality_settings_page, name="quality-settings"),
    path("p/<slug:slug>/quality/restore/<int:user_id>/", views_quality.restore_page, name="quality-restore"),
]

api_patterns = [
    path("items/<int:pk>/", api_quality.ProbeApi.as_view(), name="api-probe"),
    path("items/<int:pk>/submit/", api_quality.ProbeSubmitApi.as_view(), name="api-probe-submit"),
    path("projects/<slug:slug>/quality/", api_quality.QualitySettingsApi.as_view(), name="api-quality-settings"),
    path("projects/<slug:slug>/quality/gold/", api_quality.GoldFiguresApi.as_view(), name="api-quality-gold"),
    path("projects/<slug:slug>/quality/restore/", api_quality.RestoreApi.as_view(), name="api-quality-restore"),
]

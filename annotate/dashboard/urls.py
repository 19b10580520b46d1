"""URLs of the manager's dashboard: page, CSV and API (names unchanged)."""

from __future__ import annotations

from django.urls import path

from annotate.dashboard import api as api_dashboard
from annotate.dashboard import views as views_dashboard

page_patterns = [
    path("p/<slug:slug>/dashboard/", views_dashboard.dashboard_page, name="dashboard"),
    path("p/<slug:slug>/dashboard/<str:table>.csv", views_dashboard.dashboard_csv, name="dashboard-csv"),
]

api_patterns = [
    path("projects/<slug:slug>/pay-settings/", api_dashboard.PaySettingsApi.as_view(), name="api-pay-settings"),
    path("projects/<slug:slug>/dashboard/", api_dashboard.DashboardApi.as_view(), name="api-dashboard"),
    path("projects/<slug:slug>/dashboard/csv/", api_dashboard.DashboardCsvApi.as_view(), name="api-dashboard-csv"),
    path("projects/<slug:slug>/dashboard/draft-costs/", api_dashboard.DraftCostsApi.as_view(), name="api-draft-costs"),
]

"""URLs of batches: page and API (names unchanged from when they lived under review/)."""

from __future__ import annotations

from django.urls import path

from annotate.batches import api as api_batches
from annotate.batches import views as views_batches

page_patterns = [
    path("p/<slug:slug>/batches/", views_batches.batches_page, name="batches"),
    path("p/<slug:slug>/announcements/<int:pk>/read/", views_batches.announcement_read_page, name="announcement-read"),
]

api_patterns = [
    path("batches/<int:pk>/assign/", api_batches.BatchAssignApi.as_view(), name="api-batch-assign"),
    path("batches/<int:pk>/fill/", api_batches.BatchFillApi.as_view(), name="api-batch-fill"),
    path("projects/<slug:slug>/gating/", api_batches.GatingApi.as_view(), name="api-gating"),
    path("batches/<int:pk>/deadline/", api_batches.BatchDeadlineApi.as_view(), name="api-batch-deadline"),
    path("batches/<int:pk>/calibration/", api_batches.BatchCalibrationApi.as_view(), name="api-batch-calibration"),
    path("batches/<int:pk>/panel-order/", api_batches.BatchPanelOrderApi.as_view(), name="api-batch-panel-order"),
    path("projects/<slug:slug>/panel/", api_batches.ProjectPanelApi.as_view(), name="api-project-panel"),
    path("projects/<slug:slug>/announcements/", api_batches.AnnouncementListApi.as_view(), name="api-announcements"),
    path(
        "projects/<slug:slug>/announcements/unread/",
        api_batches.AnnouncementUnreadApi.as_view(),
        name="api-announcements-unread",
    ),
    path("announcements/<int:pk>/read/", api_batches.AnnouncementReadApi.as_view(), name="api-announcement-read"),
]

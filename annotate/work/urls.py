"""URLs of the queue and the refinement workspace: pages and API."""

from __future__ import annotations

from django.urls import path

from annotate.work import api as api_work
from annotate.work import views as views_work

page_patterns = [
    path("p/<slug:slug>/work/", views_work.work_home, name="work-home"),
    path("p/<slug:slug>/work/next/", views_work.work_next, name="work-next"),
    path("p/<slug:slug>/work/<int:pk>/", views_work.workspace_page, name="workspace"),
    path("p/<slug:slug>/work/<int:pk>/diff/", views_work.workspace_diff, name="workspace-diff"),
    path("p/<slug:slug>/work/<int:pk>/skip/", views_work.workspace_skip, name="workspace-skip"),
    path("p/<slug:slug>/work/<int:pk>/resume/", views_work.work_resume, name="work-resume"),
]

api_patterns = [
    path("projects/<slug:slug>/queue/", api_work.QueueApi.as_view(), name="api-queue"),
    path("projects/<slug:slug>/queue/next/", api_work.QueueNextApi.as_view(), name="api-queue-next"),
    path("instances/<int:pk>/workspace/", api_work.WorkspaceApi.as_view(), name="api-workspace"),
    path("instances/<int:pk>/paper/", api_work.InstancePaperApi.as_view(), name="api-instance-paper"),
    path("instances/<int:pk>/autosave/", api_work.AutosaveApi.as_view(), name="api-autosave"),
    path("instances/<int:pk>/submit/", api_work.SubmitApi.as_view(), name="api-submit"),
    path("instances/<int:pk>/skip/", api_work.SkipApi.as_view(), name="api-skip"),
    path("instances/<int:pk>/resume/", api_work.ResumeApi.as_view(), name="api-resume"),
    path("instances/<int:pk>/ping/", api_work.PingApi.as_view(), name="api-ping"),
]

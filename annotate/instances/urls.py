"""URLs of the instance browser: the page and its API (list with filters, bulk actions)."""

from __future__ import annotations

from django.urls import path

from annotate.instances import api as api_instances
from annotate.instances import views as views_instances

page_patterns = [
    path("p/<slug:slug>/instances/", views_instances.instance_browser, name="instances"),
]

api_patterns = [
    path("projects/<slug:slug>/instances/", api_instances.InstanceBrowseApi.as_view(), name="api-project-instances"),
    path("projects/<slug:slug>/instances/bulk/", api_instances.InstanceBulkApi.as_view(), name="api-instances-bulk"),
    path("projects/<slug:slug>/papers/to-batch/", api_instances.PaperBatchApi.as_view(), name="api-papers-to-batch"),
]

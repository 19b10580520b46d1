"""URLs of drafting: manager pages and the API; included by config/urls.py."""

from __future__ import annotations

from django.urls import path

from curation.drafting import api, views
from curation.drafting.services.runs import RUN_ACTIONS

page_patterns = [
    path("p/<slug:slug>/drafting/", views.drafting_home, name="drafting"),
    path("p/<slug:slug>/drafting/runs/<int:pk>/", views.run_detail, name="drafting-run"),
    path("p/<slug:slug>/drafting/runs/<int:pk>/progress/", views.run_progress, name="drafting-run-progress"),
    path("p/<slug:slug>/drafting/runs/<int:pk>/<str:action>/", views.run_action, name="drafting-run-action"),
    path("p/<slug:slug>/drafting/prompts/", views.prompt_templates, name="drafting-prompts"),
    path("p/<slug:slug>/endpoints/", views.endpoint_page, name="drafting-endpoints"),
    path("p/<slug:slug>/endpoints/<int:pk>/", views.endpoint_page, name="drafting-endpoint"),
    path("p/<slug:slug>/endpoints/<int:pk>/test/", views.endpoint_test, name="drafting-endpoint-test"),
]

api_patterns = [
    path("projects/<slug:slug>/endpoints/", api.ProjectEndpointListApi.as_view(), name="api-endpoints"),
    path("endpoints/<int:pk>/", api.EndpointDetailApi.as_view(), name="api-endpoint"),
    path("endpoints/<int:pk>/test/", api.EndpointTestApi.as_view(), name="api-endpoint-test"),
    path("projects/<slug:slug>/prompt-templates/", api.PromptTemplateListApi.as_view(), name="api-prompt-templates"),
    path("projects/<slug:slug>/drafting-runs/", api.DraftingRunListApi.as_view(), name="api-drafting-runs"),
    path("drafting-runs/<int:pk>/", api.DraftingRunDetailApi.as_view(), name="api-drafting-run"),
    *(
        path(
            f"drafting-runs/<int:pk>/{action}/",
            api.DraftingRunActionApi.as_view(action_name=action),
            name=f"api-drafting-run-{action}",
        )
        for action in RUN_ACTIONS
    ),
]

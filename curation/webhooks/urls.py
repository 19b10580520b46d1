"""URLs of webhooks: `page_patterns` (root) and `api_patterns` (under /api/), each under its project's prefix."""

from __future__ import annotations

from django.urls import include, path

from curation.webhooks import api as webhook_api
from curation.webhooks import views as webhook_views

project_pages = [
    path("webhooks/", webhook_views.webhooks_page, name="webhooks"),
    path("webhooks/<int:pk>/", webhook_views.webhook_update_page, name="webhook-update"),
    path("webhooks/<int:pk>/remove/", webhook_views.webhook_delete_page, name="webhook-remove"),
    path("webhooks/<int:pk>/secret/", webhook_views.webhook_secret_page, name="webhook-secret"),
    path("webhooks/<int:pk>/test/", webhook_views.webhook_test_page, name="webhook-test"),
    path("webhook-deliveries/<int:pk>/replay/", webhook_views.delivery_replay_page, name="webhook-delivery-replay"),
]

project_api = [
    path("webhooks/", webhook_api.WebhookListApi.as_view(), name="api-webhooks"),
    path("webhooks/<int:pk>/", webhook_api.WebhookDetailApi.as_view(), name="api-webhook"),
    path("webhooks/<int:pk>/secret/", webhook_api.WebhookSecretApi.as_view(), name="api-webhook-secret"),
    path("webhooks/<int:pk>/test/", webhook_api.WebhookTestApi.as_view(), name="api-webhook-test"),
    path("webhook-deliveries/", webhook_api.WebhookDeliveryListApi.as_view(), name="api-webhook-deliveries"),
    path(
        "webhook-deliveries/<int:pk>/replay/",
        webhook_api.WebhookDeliveryReplayApi.as_view(),
        name="api-webhook-delivery-replay",
    ),
]

page_patterns = [path("p/<slug:slug>/", include(project_pages))]
api_patterns = [path("projects/<slug:slug>/", include(project_api))]

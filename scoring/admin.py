"""Django admin for model endpoints."""

from __future__ import annotations

from django.contrib import admin

from scoring.models import ModelEndpoint


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(admin.ModelAdmin):
    list_display = ["name", "model", "base_url", "project", "concurrency_limit", "supports_tools", "is_local_default"]
    list_filter = ["project", "is_local_default"]

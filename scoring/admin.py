"""Django admin for scoring runs, predictions and error tags."""

from __future__ import annotations

from django.contrib import admin

from scoring.models import ErrorTag, Prediction, ScoringRun

admin.site.register(
    ScoringRun,
    list_display=["id", "label", "method", "setting", "status", "release", "items_total", "created_at"],
    list_filter=["status", "method", "setting", "project"],
    readonly_fields=["config", "config_hash", "template_hash", "results", "uploaded_predictions"],
)
admin.site.register(
    Prediction,
    list_display=["id", "run", "position", "uid", "status", "is_correct", "attempts", "worker"],
    list_filter=["status", "is_correct"],
    raw_id_fields=["run", "item"],
)
admin.site.register(
    ErrorTag,
    list_display=["prediction", "kind", "custom_label", "tagged_by", "tagged_at"],
    list_filter=["kind"],
    raw_id_fields=["prediction"],
)

"""Django admin for the annotation side (read mostly; attempts are never edited)."""

from __future__ import annotations

from django.contrib import admin

from annotate import models
from curation.admin import UnchangeableAdmin

admin.site.register(
    models.QualificationAttempt,
    UnchangeableAdmin,
    list_display=["project", "user", "started_at", "submitted_at", "score", "passed"],
    list_filter=["project", "passed"],
)
admin.site.register(
    models.QualificationSettings,
    list_display=["project", "threshold", "size", "time_limit_minutes", "retry_delay_hours"],
)
admin.site.register(models.Guidelines, list_display=["project", "version", "note", "created_at"])
admin.site.register(models.WorkTime, list_display=["user", "instance", "activity", "active_seconds", "last_ping_at"])
admin.site.register(models.PaySettings, list_display=["project", "pay_per_instance", "currency"])

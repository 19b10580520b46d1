"""Django admin for the annotation side (read mostly; attempts are never edited)."""

from __future__ import annotations

from django.contrib import admin

from annotate import models


@admin.register(models.QualificationSettings)
class QualificationSettingsAdmin(admin.ModelAdmin):
    list_display = ["project", "threshold", "size", "time_limit_minutes", "retry_delay_hours"]


@admin.register(models.QualificationAttempt)
class QualificationAttemptAdmin(admin.ModelAdmin):
    list_display = ["project", "user", "started_at", "submitted_at", "score", "passed"]
    list_filter = ["project", "passed"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(models.Guidelines)
class GuidelinesAdmin(admin.ModelAdmin):
    list_display = ["project", "version", "note", "created_at"]


@admin.register(models.WorkTime)
class WorkTimeAdmin(admin.ModelAdmin):
    list_display = ["user", "instance", "activity", "active_seconds", "last_ping_at"]


@admin.register(models.PaySettings)
class PaySettingsAdmin(admin.ModelAdmin):
    list_display = ["project", "pay_per_instance", "currency"]

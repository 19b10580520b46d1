"""Django admin for operators. Status is read-only here: it changes only through the lifecycle function."""

from __future__ import annotations

from django.contrib import admin

from curation import models
from curation.endpoints.models import ModelEndpoint


class TableInline(admin.StackedInline):
    model = models.Table
    extra = 0
    fields = ["order", "label", "caption", "env", "kind", "in_appendix"]


class UnchangeableAdmin(admin.ModelAdmin):
    def has_change_permission(self, request, obj=None) -> bool:
        return False


# Option-only admins: `register` builds each ModelAdmin from its options.
admin.site.register(
    models.TransitionEvent,
    UnchangeableAdmin,
    list_display=["instance", "actor", "from_status", "to_status", "created_at"],
)
admin.site.register(
    models.Project, list_display=["name", "slug", "gating", "created_at"], prepopulated_fields={"slug": ["name"]}
)
admin.site.register(
    models.Membership,
    list_display=["user", "project", "role", "is_qualified"],
    list_filter=["project", "role", "is_qualified"],
)
admin.site.register(
    models.Paper,
    list_display=["title", "project", "version", "origin", "created_at"],
    list_filter=["project", "origin"],
    inlines=[TableInline],
)
admin.site.register(
    models.ReasoningType,
    list_display=["name", "code", "parent", "target_proportion", "project"],
    list_filter=["project"],
)
admin.site.register(models.Batch, list_display=["name", "project", "order", "state", "opened_at"])
admin.site.register(
    models.Context, list_display=["id", "paper", "kind", "reasoning_type", "batch"], list_filter=["kind", "project"]
)
admin.site.register(
    models.Instance,
    list_display=["id", "project", "status", "version", "author", "question"],
    list_filter=["project", "status"],
    readonly_fields=["status", "version", "author", "round1_verifier", "round2_reviewer"],
    search_fields=["question"],
)
admin.site.register(models.WorkerHeartbeat, list_display=["hostname", "pid", "started_at", "last_seen_at"])
admin.site.register(
    ModelEndpoint,
    list_display=["name", "model", "base_url", "project", "concurrency_limit", "supports_tools", "is_local_default"],
    list_filter=["project", "is_local_default"],
)

"""Work: the active seconds a person spent on an instance."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.models import Instance


class WorkTime(models.Model):
    """Active seconds a person spent on an instance, summed from the workspace's activity pings."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    instance = models.ForeignKey(Instance, on_delete=models.CASCADE, related_name="work_times")
    activity = models.CharField(max_length=20, default="refine", help_text="refine, review1, review2")
    active_seconds = models.FloatField(default=0)
    last_ping_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "instance", "activity"], name="unique_work_time"),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.activity} {self.instance_id}: {self.active_seconds:.0f}s"

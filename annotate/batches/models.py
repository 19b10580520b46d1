"""A manager's announcement to a project's annotators and verifiers (about a batch, or in general), and who read it."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.models import Batch, Project
from curation.visibility import ProjectScopedQuerySet


class Announcement(models.Model):
    """Markdown (rendered and sanitised as guidelines are) that each annotator and verifier sees until they mark it
    read, like a new guidelines version."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="announcements")
    batch = models.ForeignKey(Batch, null=True, blank=True, on_delete=models.SET_NULL, related_name="announcements")
    text = models.TextField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"announcement {self.pk} of {self.project}"


class AnnouncementRead(models.Model):
    """The "I've read it" of one member (recorded once, with when)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    announcement = models.ForeignKey(Announcement, on_delete=models.CASCADE, related_name="reads")
    read_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "announcement"], name="unique_announcement_read")]

    def __str__(self) -> str:
        return f"{self.user} read announcement {self.announcement_id}"

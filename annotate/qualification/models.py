"""Qualification and guidelines: a project's exam, its items and attempts, guideline versions and who read them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.models import Instance, Project


class QualificationSettings(models.Model):
    """A project's exam: which gold instances, the pass threshold, time limit and retry delay."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="qualification")
    threshold = models.FloatField(default=0.95, help_text="EM needed to pass, 0–1")
    size = models.PositiveIntegerField(default=20)
    time_limit_minutes = models.PositiveIntegerField(null=True, blank=True)
    retry_delay_hours = models.PositiveIntegerField(default=24)
    items = models.ManyToManyField(Instance, through="QualificationItem", related_name="+")

    def __str__(self) -> str:
        return f"qualification of {self.project}"


class QualificationItem(models.Model):
    settings = models.ForeignKey(QualificationSettings, on_delete=models.CASCADE, related_name="item_links")
    instance = models.ForeignKey(Instance, on_delete=models.PROTECT, related_name="+")
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["settings", "order", "id"]
        constraints = [models.UniqueConstraint(fields=["settings", "instance"], name="unique_qualification_item")]

    def __str__(self) -> str:
        return f"item {self.order} ({self.instance_id})"


class QualificationAttempt(models.Model):
    """One sitting of the exam. Gold answers enter `results` only once the attempt is submitted."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="qualification_attempts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    item_ids = models.JSONField(default=list, help_text="Instance ids in the order shown")
    answers = models.JSONField(default=dict, blank=True, help_text="{instance id: {answer: [...], rationale}}")
    started_at = models.DateTimeField(auto_now_add=True)
    deadline_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)
    passed = models.BooleanField(null=True)
    results = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["project", "user", "-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "user"], condition=models.Q(submitted_at=None), name="one_open_attempt"
            )
        ]

    def __str__(self) -> str:
        return f"attempt of {self.user} ({self.score})"

    @property
    def seconds_taken(self) -> float | None:
        """From start to hand-in, in seconds; None while the attempt is open."""
        return (self.submitted_at - self.started_at).total_seconds() if self.submitted_at else None


class Guidelines(models.Model):
    """A version of a project's annotation guidelines (Markdown)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="guidelines")
    version = models.PositiveIntegerField()
    text = models.TextField()
    note = models.CharField(max_length=300, blank=True, help_text="What changed")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "-version"]
        constraints = [models.UniqueConstraint(fields=["project", "version"], name="unique_guidelines_version")]

    def __str__(self) -> str:
        return f"guidelines v{self.version} of {self.project}"


class GuidelinesRead(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    guidelines = models.ForeignKey(Guidelines, on_delete=models.CASCADE, related_name="reads")
    read_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "guidelines"], name="unique_guidelines_read")]

    def __str__(self) -> str:
        return f"{self.user} read v{self.guidelines.version}"


class Vouch(models.Model):
    """A manager's recorded decision that an annotator is qualified without the exam (a new project's first
    annotators have no gold to be examined on). Revoking it takes back the qualification it gave."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="vouches")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    vouched_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    gave_qualification = models.BooleanField(help_text="False when the annotator was qualified already")
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["project", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "user"], condition=models.Q(revoked_at=None), name="one_standing_vouch"
            )
        ]

    def __str__(self) -> str:
        return f"{self.vouched_by} vouches for {self.user} in {self.project}"

"""Quality that keeps being measured: a project's hidden-gold settings, the gold probes served in the queue, and
the audited pause/restore decisions about annotators."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.models import Instance, Project


class QualitySettings(models.Model):
    """How often the queue serves hidden gold, and what a running EM below the threshold leads to."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="quality")
    gold_every = models.PositiveIntegerField(
        default=0, help_text="Serve one hidden gold item in every N claims (0: hidden gold is off)"
    )
    gold_threshold = models.FloatField(default=0.8, help_text="Running hidden-gold EM below this alerts, 0–1")
    gold_min_sample = models.PositiveIntegerField(default=10, help_text="Scored gold items needed before alerting")
    is_pause_on_fail = models.BooleanField(
        default=False, help_text="Pause an annotator below the threshold until they re-qualify"
    )

    def __str__(self) -> str:
        return f"quality settings of {self.project}"


class GoldProbe(models.Model):
    """One validated gold instance served to one annotator as if it were a draft. Its answer is scored with the
    exam's EM and goes nowhere else: the gold instance itself is never touched."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="gold_probes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    gold = models.ForeignKey(Instance, on_delete=models.PROTECT, related_name="+")
    served_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    answer = models.JSONField(default=list, blank=True)
    rationale = models.TextField(blank=True)
    em = models.FloatField(null=True, blank=True, help_text="Exact match with the gold answer, once submitted")
    # The probe is shown in the workspace as instance #number: a number taken from the instances' own sequence, so
    # it sits among the drafts' numbers and no instance ever has it.
    number = models.PositiveBigIntegerField(null=True, blank=True, unique=True)
    fields = models.JSONField(default=dict, blank=True, help_text="The annotator's autosaved work on the probe")
    version = models.PositiveIntegerField(default=1)
    skip_reason = models.CharField(max_length=500, blank=True, help_text="Given back unanswered, with this reason")

    class Meta:
        ordering = ["project", "user", "served_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "user"], condition=models.Q(submitted_at=None), name="one_open_gold_probe"
            ),
            models.UniqueConstraint(fields=["user", "gold"], name="gold_probe_once_per_user"),
        ]

    def __str__(self) -> str:
        return f"gold probe {self.gold_id} for {self.user} ({self.em})"


class QualityDecision(models.Model):
    """An audited pause or restore of an annotator's qualification, with the figures it was based on."""

    class Action(models.TextChoices):
        PAUSED = "paused", "Paused"
        RESTORED = "restored", "Restored"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="quality_decisions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    action = models.CharField(max_length=10, choices=Action.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.CharField(max_length=500)
    em = models.FloatField(null=True, blank=True)
    sample = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.user} {self.action} in {self.project}"

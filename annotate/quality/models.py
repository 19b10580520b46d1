"""Quality that keeps being measured: a project's hidden-gold settings, the gold probes served in the queue, the ids
their late placement reissued, and the audited pause/restore decisions about annotators."""

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
    """Which instance is a hidden-gold probe, of which gold item, and its score: the manager-only mark of an ordinary
    instance of a batch (served, worked on, reviewed as a draft is). No annotator-visible read joins this table; the
    one rule that keeps probes out of releases and figures is `InstanceQuerySet.without_probes`."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="gold_probes")
    # Null only for probes scored before probes were instances (their scores still count in the running figure).
    instance = models.OneToOneField(
        Instance, null=True, blank=True, on_delete=models.CASCADE, related_name="gold_probe"
    )
    gold = models.ForeignKey(Instance, on_delete=models.PROTECT, related_name="+")
    # Set when the probe is first submitted: who answered it, when, and how it scored against the gold.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    em = models.FloatField(null=True, blank=True, help_text="Exact match with the gold answer, once submitted")

    class Meta:
        ordering = ["project", "instance_id", "id"]

    def __str__(self) -> str:
        return f"gold probe {self.gold_id} as #{self.instance_id} ({self.em})"


class ReissuedId(models.Model):
    """An id a draft had before hidden gold's late placement gave it a new one (`_reissue`), and the instance it is now:
    a manager's link to the old id leads to it. Managers only, as `GoldProbe`: to anyone else an old id is simply not
    found, since which old ids lead where would tell which of the new ids none leads to, the probes."""

    old_id = models.PositiveBigIntegerField(primary_key=True)
    # Rows pointing at an instance follow it when it is reissued again, so an old id leads to the latest one.
    instance = models.ForeignKey(Instance, on_delete=models.CASCADE, related_name="+")

    def __str__(self) -> str:
        return f"#{self.old_id} reissued as #{self.instance_id}"


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

"""A calibration (one job row: a batch answered by every model of the project's panel) and what each model answered.

The answering itself is scoring's (`scoring.calibration`, Direct QA on the short context, the official metric): the
core keeps the rows, so the queue, the instance browser and release statistics read them without importing scoring.
"""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q

from curation.jobs import ProgressJob
from curation.models import Batch
from curation.visibility import ProjectScopedQuerySet

__all__ = ["PANEL_HELD", "Calibration", "PanelAnswer"]

# An instance held back by its batch's panel order: every panel model answered it. The claim's SQL says the same
# (curation/services/lifecycle.py, _CLAIM_PANEL_HELD); every count of what can be claimed excludes it with this.
PANEL_HELD = Q(panel_correct=F("panel_size"), batch__panel_order=Batch.PanelOrder.HOLD_ANSWERED)


class Calibration(ProgressJob):
    """Every instance of a batch answered by each model of the panel named when it was asked (`endpoints`)."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Answering"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    ACTIVE = (State.PENDING, State.RUNNING)  # a calibration in these states holds the batch: one at a time

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="calibrations")
    batch = models.ForeignKey("curation.Batch", on_delete=models.CASCADE, related_name="calibrations")
    endpoints = models.ManyToManyField("curation.ModelEndpoint", related_name="+")
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    objects = ProjectScopedQuerySet.as_manager()

    class Meta:
        ordering = ["project", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"calibration {self.pk} of batch {self.batch_id} ({self.state})"


class PanelAnswer(models.Model):
    """One panel model's answer to one instance in one calibration, scored by the official metric. A newer
    calibration of the instance replaces its earlier answers (its k of n is the latest panel's)."""

    calibration = models.ForeignKey(Calibration, on_delete=models.CASCADE, related_name="answers")
    instance = models.ForeignKey("curation.Instance", on_delete=models.CASCADE, related_name="panel_answers")
    endpoint = models.ForeignKey(
        "curation.ModelEndpoint", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    model = models.CharField(max_length=200, help_text="The endpoint's name when it answered")
    answer = models.JSONField(default=list, blank=True)
    scale = models.CharField(max_length=20, blank=True)
    raw_output = models.TextField(blank=True)
    is_correct = models.BooleanField(default=False)
    error = models.TextField(blank=True, help_text="Why the model gave no answer (the endpoint failed)")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["instance", "model"]
        constraints = [
            models.UniqueConstraint(fields=["calibration", "instance", "endpoint"], name="unique_panel_answer")
        ]

    def __str__(self) -> str:
        return f"{self.model} on #{self.instance_id}: {'right' if self.is_correct else 'wrong'}"

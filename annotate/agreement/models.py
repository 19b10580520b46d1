"""Double annotation: a project's settings (what fraction of drafts, which seed) and one record per selected
instance holding the second annotator's independent copy, the first annotator's first submission as it was handed
in, and the round-one verifier's decision."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from curation.models import Batch, Instance, Project, ReasoningType


class AgreementSettings(models.Model):
    """Which share of drafts two annotators refine independently; the seed makes the selection reproducible."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="agreement")
    double_fraction = models.FloatField(
        default=0.0, help_text="Share of drafts refined by two annotators independently, 0–1 (0: off)"
    )
    seed = models.PositiveIntegerField(default=0, help_text="Seed of the selection (same seed, same drafts)")

    def __str__(self) -> str:
        return f"double annotation of {self.project}"


class DoubleAnnotation(models.Model):
    """One double-annotated instance. The instance itself is the first annotator's version and stays the one in the
    pipeline; the second annotator's copy lives here only (never an Instance, so never queued, released or
    exported). `first_fields` freezes the first submission (before any round-one change request), so agreement
    compares two independent pieces of work."""

    class State(models.TextChoices):
        WAITING = "waiting", "Waiting for a second annotator"
        IN_REFINEMENT = "in_refinement", "Second annotator refining"
        SUBMITTED = "submitted", "Both versions in"
        DECIDED = "decided", "Decided in round one"

    class Decision(models.TextChoices):
        KEPT_FIRST = "kept_first", "Kept the first version"
        KEPT_SECOND = "kept_second", "Kept the second version"
        MERGED = "merged", "Merged field by field"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="double_annotations")
    instance = models.OneToOneField(Instance, on_delete=models.CASCADE, related_name="double_annotation")
    batch = models.ForeignKey(Batch, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    first_annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    first_fields = models.JSONField(default=dict, help_text="The first annotator's first submission")
    second_annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.WAITING)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # The second annotator's copy: starts from the original draft, never from the first annotator's work.
    question = models.TextField(blank=True)
    rationale = models.TextField(blank=True)
    answer = models.JSONField(default=list, blank=True)
    answer_form = models.CharField(max_length=10, choices=Instance.AnswerForm.choices, blank=True)
    answer_source = models.CharField(max_length=12, choices=Instance.AnswerSource.choices, blank=True)
    answer_type = models.CharField(max_length=20, blank=True)
    # null is "not chosen yet", "" the scale None: two meanings a string alone cannot hold apart.
    scale = models.CharField(max_length=20, blank=True, null=True, default=None)  # noqa: DJ001
    reasoning_type = models.ForeignKey(ReasoningType, null=True, blank=True, on_delete=models.SET_NULL)
    relevant_table_ids = models.JSONField(default=list, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    decision = models.CharField(max_length=12, choices=Decision.choices, blank=True)
    decision_fields = models.JSONField(default=dict, blank=True, help_text="Field → first/second, as decided")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "id"]
        constraints = [
            # The queue's promise, held by the database too: the copy never goes to the first annotator.
            models.CheckConstraint(
                condition=Q(second_annotator__isnull=True) | ~Q(second_annotator=F("first_annotator")),
                name="double_second_is_another_person",
            ),
            models.UniqueConstraint(
                fields=["project", "second_annotator"],
                condition=Q(state="in_refinement"),
                name="one_held_copy_per_annotator",
            ),
        ]
        indexes = [models.Index(fields=["project", "state"], name="double_project_state")]

    def __str__(self) -> str:
        return f"double annotation of instance {self.instance_id} ({self.state})"

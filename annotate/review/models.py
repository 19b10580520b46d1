"""Two-round validation records: review comments and discussion threads with their outcome."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from curation.models import Instance
from curation.visibility import DiscussionQuerySet

__all__ = ["Discussion", "DiscussionMessage", "ReviewComment"]


class ReviewComment(models.Model):
    """A reviewer's remark on a whole instance or on one field, made in round one or round two."""

    class Field(models.TextChoices):
        WHOLE = "", "Whole instance"
        QUESTION = "question", "Question"
        RATIONALE = "rationale", "Rationale"
        ANSWER = "answer", "Answer"
        SOURCE = "source", "Answer source"
        TABLES = "tables", "Relevant tables"

    class Round(models.IntegerChoices):
        ONE = 1, "Round one"
        TWO = 2, "Round two"

    instance = models.ForeignKey(Instance, on_delete=models.CASCADE, related_name="review_comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    round = models.PositiveSmallIntegerField(choices=Round.choices)
    field = models.CharField(max_length=20, choices=Field.choices, blank=True, default=Field.WHOLE)
    text = models.TextField()
    instance_version = models.PositiveIntegerField(help_text="The version the comment was written on")
    is_resolved = models.BooleanField(default=False)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["instance", "created_at", "id"]

    def __str__(self) -> str:
        return f"round {self.round} comment on {self.field or 'instance'} of {self.instance_id}"


class Discussion(models.Model):
    """A round-two flag discussed between the second annotator and the round-one verifier, who decides it."""

    class Outcome(models.TextChoices):
        OPEN = "", "Open"
        ACCEPTED = "accepted", "Flag accepted"
        REJECTED = "rejected", "Flag rejected"
        CLOSED = "closed", "Closed: the instance was discarded"

    class Resolution(models.TextChoices):
        NONE = "", "—"
        EDITED = "edited", "Verifier edited the instance"
        SENT_BACK = "sent_back", "Sent back to the annotator"
        KEPT = "kept", "Instance kept as it was"

    instance = models.ForeignKey(Instance, on_delete=models.CASCADE, related_name="discussions")
    opened_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # Who decides it: the round-one verifier, or the verifier who took it after a give-back; empty while it waits.
    verifier = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    outcome = models.CharField(max_length=20, choices=Outcome.choices, blank=True, default=Outcome.OPEN)
    resolution = models.CharField(max_length=20, choices=Resolution.choices, blank=True, default=Resolution.NONE)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    opened_at = models.DateTimeField(auto_now_add=True)
    objects = DiscussionQuerySet.as_manager()

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["instance"], condition=Q(outcome=""), name="one_open_discussion")
        ]

    def __str__(self) -> str:
        return f"discussion on {self.instance_id} ({self.outcome or 'open'})"

    @property
    def is_open(self) -> bool:
        return self.outcome == self.Outcome.OPEN


class DiscussionMessage(models.Model):
    discussion = models.ForeignKey(Discussion, on_delete=models.CASCADE, related_name="messages")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["discussion", "created_at", "id"]

    def __str__(self) -> str:
        return f"message {self.pk} in discussion {self.discussion_id}"

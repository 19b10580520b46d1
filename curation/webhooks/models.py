"""A project's webhooks, each delivery of an event to one of them, and each attempt at sending it."""

from __future__ import annotations

import json
import uuid
from urllib.parse import urlsplit

from django.conf import settings
from django.db import models

from curation.jobs import JobRow
from curation.visibility import ProjectScopedQuerySet

# The events a hook can subscribe to; `webhook.test` is sent only by "Send test event" (to that one hook).
EVENTS = (
    ("batch.settled", "A batch settled: every instance validated, released or discarded"),
    ("release.cut", "A release was cut"),
    ("scoring_run.finished", "A scoring run finished (completed or failed)"),
    ("annotator.paused", "Hidden gold paused an annotator"),
)
EVENT_NAMES = tuple(name for name, _ in EVENTS)
TEST_EVENT = "webhook.test"


class DeliveryQuerySet(ProjectScopedQuerySet):
    """Deliveries, through their hook's project."""

    project_field = "webhook__project"


class Webhook(models.Model):
    """A URL that receives the project's chosen events, signed with the hook's own secret."""

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=500)
    events = models.JSONField(default=list, help_text="Names of the subscribed events")
    # Kept in clear because every delivery is signed with it; shown once at creation, then only on reveal.
    secret = models.CharField(max_length=80)
    description = models.CharField(max_length=200, blank=True)
    is_active = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectScopedQuerySet.as_manager()  # only the project's managers see them (webhooks.selectors)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"webhook {self.pk} → {self.url}"

    @property
    def address(self) -> str:
        """The receiver as people name it on the page: host (and port) and path, without scheme or query."""
        parts = urlsplit(self.url)
        return f"{parts.netloc}{parts.path}" or self.url


class WebhookDelivery(JobRow):
    """One event for one hook: the exact body signed on each attempt, sent by a worker with bounded retries."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENDING = "sending", "Being sent"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Given up"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    event = models.CharField(max_length=40)
    body = models.TextField(help_text="The JSON body as sent (the signature covers these bytes)")
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    replay_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replays")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    objects = DeliveryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["webhook", "-created_at"]), models.Index(fields=["state", "heartbeat_at"])]

    def __str__(self) -> str:
        return f"delivery {self.pk} ({self.event}) to webhook {self.webhook_id}"

    @property
    def event_id(self) -> str:
        """The event's id, the body's `id` and the `webhook-id` header: the receiver's one de-duplication key (the
        same on every attempt and on a replay, whose body is the original's)."""
        return json.loads(self.body)["id"]


class WebhookAttempt(models.Model):
    """One HTTP request of a delivery: its status code (none when it never got an answer), how long it took, the
    receiver's answer headers, and the error (never the receiver's body)."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_rows")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    status_code = models.PositiveIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    response_headers = models.JSONField(default=dict, blank=True, help_text="the answer's headers (names lower-cased)")
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_once")]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}"

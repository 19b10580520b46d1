"""Reads of a project's webhooks and their deliveries, for its managers only (secrets are never part of them)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch, QuerySet

from curation.errors import NotFound
from curation.models import Project
from curation.states import Role
from curation.webhooks.models import Webhook, WebhookAttempt, WebhookDelivery

MANAGERS = (Role.MANAGER,)


def webhooks_of(*, user: AbstractBaseUser, project: Project) -> QuerySet[Webhook]:
    """The project's hooks, oldest first; empty unless `user` manages the project."""
    return Webhook.objects.visible_to(user, MANAGERS).filter(project=project).order_by("id")


def deliveries_of(*, user: AbstractBaseUser, project: Project, webhook_id: int | None = None) -> list[WebhookDelivery]:
    """The project's 50 most recent deliveries (of one hook when given) with their attempts; managers only."""
    deliveries = WebhookDelivery.objects.visible_to(user, MANAGERS).filter(webhook__project=project)
    if webhook_id is not None:
        deliveries = deliveries.filter(webhook_id=webhook_id)
    attempts = Prefetch("attempt_rows", queryset=WebhookAttempt.objects.order_by("number"))
    return list(deliveries.select_related("webhook").prefetch_related(attempts).order_by("-created_at", "-id")[:50])


def delivery_get(*, user: AbstractBaseUser, project: Project, delivery_id: int) -> WebhookDelivery | None:
    """One delivery of the project with its attempts, or None; managers only."""
    deliveries = WebhookDelivery.objects.visible_to(user, MANAGERS).filter(webhook__project=project, pk=delivery_id)
    return deliveries.select_related("webhook").prefetch_related("attempt_rows").first()


def webhook_get(*, user: AbstractBaseUser, project: Project, webhook_id: int) -> Webhook:
    """One hook of the project (without revealing anything to non-managers, who get NotFound)."""
    hook = webhooks_of(user=user, project=project).filter(pk=webhook_id).first()
    if hook is None:
        raise NotFound(f"No webhook {webhook_id} in this project.")
    return hook

"""Celery tasks of the annotation side (thin: call one service)."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from annotate.agreement.services import copies_reap
from annotate.work.leases import leases_reap


@shared_task(name="annotate.leases_reap", acks_late=True)
def leases_reap_task() -> int:
    """Periodic: return expired leases to the queue, of instances and of double-annotation copies (run by beat every
    minute)."""
    now = timezone.now()
    return leases_reap(now=now) + copies_reap(now=now)

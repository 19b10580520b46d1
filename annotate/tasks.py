"""Celery tasks of the annotation side (thin: call one service)."""

from __future__ import annotations

from celery import shared_task

from annotate.work.leases import leases_reap


@shared_task(name="annotate.leases_reap", acks_late=True)
def leases_reap_task() -> int:
    """Periodic: return expired leases to the queue (run by beat every minute)."""
    return leases_reap()

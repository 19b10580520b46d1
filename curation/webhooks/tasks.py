"""Celery task of webhooks (thin: an id in, one service call)."""

from __future__ import annotations

from celery import shared_task

from curation.jobs import TransactionAwareTask
from curation.webhooks.services import delivery_send


@shared_task(name="curation.webhook_deliver", acks_late=True, bind=True, base=TransactionAwareTask)
def webhook_deliver_task(self, delivery_id: int) -> str:
    """Make one attempt of a delivery; a duplicate finds it delivered, failed, held or not due yet and exits."""
    delivery = delivery_send(delivery_id=delivery_id, worker=self.request.hostname or "")
    return delivery.state if delivery is not None else "missing"

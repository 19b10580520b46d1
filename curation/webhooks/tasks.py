"""Celery task of webhooks (an id in, one attempt of the delivery)."""

from __future__ import annotations

from curation.jobs import job_kind_task
from curation.webhooks.services import WEBHOOK_DELIVERIES

webhook_deliver_task = job_kind_task(WEBHOOK_DELIVERIES)

"""Which Celery queue each kind of background work goes to: drafting, scoring, exports (with paper ingestion and
dataset imports) and control (webhook deliveries and the periodic reapers: short tasks that must never wait behind
a long one) never wait behind one another; each queue gets its own worker in scripts/start."""

from __future__ import annotations

from typing import Any

from django.conf import settings

DEFAULT_QUEUE = "celery"

# Task name → the setting naming its queue (read at send time, so tests and deployments can move a queue).
TASK_QUEUE_SETTINGS = {
    "curation.drafting_chunk": "TATCURATE_DRAFTING_QUEUE",
    "scoring.run_chunk": "TATCURATE_SCORING_QUEUE",
    "scoring.calibrate": "TATCURATE_SCORING_QUEUE",
    "curation.export_build": "TATCURATE_EXPORTS_QUEUE",
    "curation.release_cut": "TATCURATE_EXPORTS_QUEUE",
    "curation.paper_ingest": "TATCURATE_EXPORTS_QUEUE",  # files in and out share the exports worker
    "curation.dataset_import": "TATCURATE_EXPORTS_QUEUE",
    "curation.webhook_deliver": "TATCURATE_WEBHOOKS_QUEUE",
    "curation.jobs_reap": "TATCURATE_CONTROL_QUEUE",
    "annotate.leases_reap": "TATCURATE_CONTROL_QUEUE",
}


def queue_for(task_name: str) -> str:
    """The queue a task is sent to when its caller names none."""
    setting = TASK_QUEUE_SETTINGS.get(task_name)
    return (getattr(settings, setting) if setting else "") or DEFAULT_QUEUE


def waiting_label(queued_behind: int | None) -> str:
    """What a started run that no worker has picked up yet says instead of its status ("" once it has begun)."""
    if queued_behind is None:
        return ""
    if queued_behind == 0:
        return "Queued, waiting for a worker"
    return f"Queued behind {queued_behind} run{'s' if queued_behind != 1 else ''}"


def task_queue_route(name: str, args: Any, kwargs: Any, options: dict[str, Any], task: Any = None, **_: Any) -> dict:
    """Celery router (settings.CELERY_TASK_ROUTES): an explicit `queue=` of the sender still wins."""
    return {"queue": queue_for(name)}

"""Celery tasks of scoring runs (thin: ids in, one service call). Time limits stay far below the broker's
visibility timeout (3 h on Redis), so a live task is never handed to a second worker by the broker itself."""

from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from scoring.services import runs

CHUNK_SOFT_TIME_LIMIT_S = 1500
CHUNK_TIME_LIMIT_S = 1560


@shared_task(
    name="scoring.run_chunk",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=CHUNK_SOFT_TIME_LIMIT_S,
    time_limit=CHUNK_TIME_LIMIT_S,
)
def run_chunk_task(chunk_id: int) -> str:
    """Process one chunk (and then other queued chunks of its run); a chunk held by someone else, or done, is
    skipped quietly."""
    from celery import current_task

    hostname = getattr(current_task.request, "hostname", "") or ""
    try:
        # Then the run's other queued chunks, for at most half the soft limit (see runs.run_work).
        outcomes = runs.run_work(chunk_id=chunk_id, worker=hostname, budget_s=CHUNK_SOFT_TIME_LIMIT_S / 2)
        return ", ".join(outcomes)
    except SoftTimeLimitExceeded:
        # The chunk was handed back by the service; the reaper (or this re-send) continues it.
        run_chunk_task.apply_async(args=[chunk_id], queue=current_task.request.delivery_info.get("routing_key"))
        return "time limit: sent again"


@shared_task(name="scoring.runs_reap", acks_late=True)
def runs_reap_task() -> int:
    """Send again the chunks whose worker went silent (beat runs this every minute)."""
    return runs.runs_reap()

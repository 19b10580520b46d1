"""Work a vanished worker left behind: a restart under the same name requeues its chunks at once; the beat reaper
(curation.jobs_reap) requeues the chunks of a silent one, whatever its successor is called."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.services.runs import OPEN_ITEM_STATES, chunks_enqueue, run_finish_if_done
from curation.jobs import job_reap, job_stall_cutoff


def runs_resume_for_worker(*, worker: str) -> int:
    """Requeue the drafting work `worker` holds: it is shutting down, or restarted under the same name after dying
    (Celery's worker_shutdown and worker_ready, curation.jobs); the item rows make the requeue harmless."""
    active = (DraftingRun.Status.QUEUED, DraftingRun.Status.RUNNING)
    stale = DraftingItem.objects.filter(worker=worker, status__in=OPEN_ITEM_STATES, run__status__in=active)
    by_run: dict[int, set[int]] = {}
    for run_id, chunk in stale.values_list("run_id", "chunk"):
        by_run.setdefault(run_id, set()).add(chunk)
    with transaction.atomic():
        stale.filter(status=DraftingItem.Status.RUNNING).update(status=DraftingItem.Status.PENDING, claim_token="")
        for run in DraftingRun.objects.filter(pk__in=by_run):
            chunks_enqueue(run, sorted(by_run[run.pk]))
    return sum(len(chunks) for chunks in by_run.values())


def items_reap(*, stall_s: float | None = None) -> int:
    """Requeue the chunks of started runs whose worker went silent (its heartbeat on the items is stale, whatever
    the new worker is called); an item claimed TATCURATE_JOB_MAX_ATTEMPTS times fails instead. Returns how many
    items were reaped. Run by the beat reaper (curation.jobs_reap); `stall_s` defaults to the one stall rule."""
    stalled = DraftingItem.objects.filter(
        run__status__in=(DraftingRun.Status.QUEUED, DraftingRun.Status.RUNNING),
        run__started_at__isnull=False,
        status__in=OPEN_ITEM_STATES,
        heartbeat_at__lt=job_stall_cutoff(stall_s),
    )
    with transaction.atomic():
        requeued, failed = job_reap(
            stalled=stalled,
            waiting=DraftingItem.Status.PENDING,
            failed=DraftingItem.Status.FAILED,
            attempts_field="attempts",
            max_attempts=settings.TATCURATE_JOB_MAX_ATTEMPTS,
            describe=lambda item: f"drafting {item}",
        )
        by_run: dict[int, set[int]] = {}
        for item in requeued:
            by_run.setdefault(item.run_id, set()).add(item.chunk)
        for run in DraftingRun.objects.filter(pk__in=by_run):
            chunks_enqueue(run, sorted(by_run[run.pk]))
    for run_id in {item.run_id for item in failed}:
        run_finish_if_done(run_id=run_id)
    return len(requeued) + len(failed)

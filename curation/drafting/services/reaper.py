"""Work a vanished worker left behind: a restart under the same name requeues its chunks at once; the beat reaper
(curation.jobs_reap) requeues the chunks of a silent one, whatever its successor is called."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.services.runs import OPEN_ITEM_STATES, chunks_enqueue, chunks_pending, run_finish_if_done
from curation.jobs import job_forgotten_seconds, job_reap, job_silent, job_stall_cutoff

logger = logging.getLogger(__name__)


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
        job_silent(running=OPEN_ITEM_STATES, stall_s=stall_s),
        run__status__in=(DraftingRun.Status.QUEUED, DraftingRun.Status.RUNNING),
        run__started_at__isnull=False,
    ).exclude(status=DraftingItem.Status.PENDING, worker="")  # no worker began it: _silent_runs_resend's part
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
    return len(requeued) + len(failed) + _silent_runs_resend(stall_s)


def _silent_runs_resend(stall_s: float | None) -> int:
    """Send again the pending chunks of a started run that no worker has touched for `job_forgotten_seconds()`:
    their messages were lost (a broker restarted without its data), and no heartbeat will ever go stale for them.
    The items are stamped (without a worker, so the stall check above leaves them alone), so a run waiting behind
    others is sent again once a period at most."""
    cutoff = job_stall_cutoff(job_forgotten_seconds() if stall_s is None else 3 * stall_s)
    silent = (
        DraftingRun.objects.filter(
            status__in=(DraftingRun.Status.QUEUED, DraftingRun.Status.RUNNING),
            started_at__lt=cutoff,
            items__status=DraftingItem.Status.PENDING,
        )
        .exclude(items__heartbeat_at__gte=cutoff)
        .exclude(items__finished_at__gte=cutoff)
        .distinct()
    )
    resent = 0
    with transaction.atomic():
        for run in list(silent):
            chunks = chunks_pending(run)
            run.items.filter(status=DraftingItem.Status.PENDING).update(heartbeat_at=timezone.now(), worker="")
            chunks_enqueue(run, chunks)
            logger.warning("reaper: drafting run %s went unattended; %d chunk(s) sent again", run.pk, len(chunks))
            resent += len(chunks)
    return resent

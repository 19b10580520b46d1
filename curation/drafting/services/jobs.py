"""The drafting item as a job kind: its claim, and the work a vanished worker left behind (a restart under the same
name requeues its chunks at once; the beat reaper, curation.jobs_reap, those of a silent one)."""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.services.runs import OPEN_ITEM_STATES, chunks_enqueue, chunks_pending, run_finish_if_done
from curation.jobs import JobKind, job_forgotten_seconds, job_silent, job_stall_cutoff

logger = logging.getLogger(__name__)
ACTIVE = DraftingRun.ACTIVE


class DraftingItems(JobKind):
    """Drafting items: each item of a chunk is claimed by its token (from pending only: a silent worker's items
    come back through the reaper), drafted and committed on its own (curation/drafting/services/items.py). The
    reaper requeues the chunks of started runs whose worker went silent (its heartbeat on the items is stale,
    whatever the new worker is called); an item claimed TATCURATE_JOB_MAX_ATTEMPTS times fails instead. A run no
    worker has touched for `job_forgotten_seconds()` has its pending chunks sent again."""

    name = "drafting items"
    model = DraftingItem
    state_field = "status"
    waiting = DraftingItem.Status.PENDING
    running = DraftingItem.Status.RUNNING
    done = DraftingItem.Status.DRAFTED
    failed = DraftingItem.Status.FAILED
    is_taken_over_when_silent = False
    run_finish = staticmethod(run_finish_if_done)

    def describe(self, item: DraftingItem) -> str:
        return f"drafting {item}"

    def stalled(self, stall_s: float | None = None) -> QuerySet:
        return DraftingItem.objects.filter(
            job_silent(running=OPEN_ITEM_STATES, stall_s=stall_s), run__status__in=ACTIVE, run__started_at__isnull=False
        ).exclude(status=DraftingItem.Status.PENDING, worker="")  # no worker began it: forgotten_resend's part

    def held_by(self, worker: str) -> QuerySet:
        return DraftingItem.objects.filter(worker=worker, status__in=OPEN_ITEM_STATES, run__status__in=ACTIVE)

    def send_again(self, rows: list[DraftingItem]) -> None:
        by_run: dict[int, set[int]] = {}
        for item in rows:
            by_run.setdefault(item.run_id, set()).add(item.chunk)
        for run in DraftingRun.objects.filter(pk__in=by_run):
            chunks_enqueue(run, sorted(by_run[run.pk]))

    def forgotten_resend(self, stall_s: float | None) -> int:
        """Send again the pending chunks of a started run that no worker has touched for `job_forgotten_seconds()`:
        their messages were lost (a broker restarted without its data), and no heartbeat will ever go stale for them.
        The items are stamped (without a worker, so the stall check above leaves them alone), so a run waiting behind
        others is sent again once a period at most."""
        cutoff = job_stall_cutoff(job_forgotten_seconds() if stall_s is None else 3 * stall_s)
        silent = (
            DraftingRun.objects.filter(
                status__in=ACTIVE, started_at__lt=cutoff, items__status=DraftingItem.Status.PENDING
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


DRAFTING_ITEMS = DraftingItems()

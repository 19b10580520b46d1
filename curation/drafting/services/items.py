"""Drafting one chunk on a worker: claim each item by its token, draft it, and commit its drafts and its "drafted"
in one transaction, so an item is drafted exactly once however often its message comes."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.utils import timezone

from curation.drafting.endpoints import describe_endpoint_error
from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.services.drafter import Drafter, Outcome
from curation.drafting.services.runs import chunks_pending, run_finish_if_done
from curation.endpoints.errors import EndpointConfigError, EndpointError, EndpointUnauthorized
from curation.jobs import job_claim, job_heartbeat, job_token
from curation.services.instances import answer_kind_suggested
from curation.services.lifecycle import instance_create
from curation.states import Status

logger = logging.getLogger(__name__)


class _ClaimLost(Exception):
    """Another worker took the item over (it was requeued); this worker's result is dropped."""


def chunk_process(
    *, run_id: int, chunk: int, worker: str = "", on_item: Callable[[DraftingItem], None] | None = None
) -> int:
    """Draft the pending items of one chunk, each committed on its own; returns how many this call drafted."""
    run = DraftingRun.objects.select_related("project", "endpoint").filter(pk=run_id).first()
    if run is None or not run.is_active:
        return 0
    DraftingRun.objects.filter(pk=run_id, status=DraftingRun.Status.QUEUED).update(status=DraftingRun.Status.RUNNING)
    item_ids = list(
        DraftingItem.objects.filter(run_id=run_id, chunk=chunk, status=DraftingItem.Status.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not item_ids:
        run_finish_if_done(run_id=run_id)
        return 0
    # Stamp the chunk with this worker and a heartbeat, renewed after each item: a worker that vanishes leaves a
    # stale heartbeat, and the reaper requeues the chunk (a restart under the same name requeues it at once).
    chunk_rows = DraftingItem.objects.filter(run_id=run_id, chunk=chunk, status=DraftingItem.Status.PENDING)
    chunk_rows.filter(pk__in=item_ids).update(worker=worker, heartbeat_at=timezone.now())
    drafter = Drafter(run)
    drafted = 0
    for item_id in item_ids:
        if not DraftingRun.objects.filter(pk=run_id, status=DraftingRun.Status.RUNNING).exists():
            break
        item = _item_draft(run, drafter, item_id, worker)
        chunk_rows.filter(worker=worker).update(heartbeat_at=timezone.now())
        if item is not None:
            drafted += item.status == DraftingItem.Status.DRAFTED
            if on_item is not None:
                on_item(item)
    run_finish_if_done(run_id=run_id)
    return drafted


def run_process_inline(*, run_id: int, on_item: Callable[[DraftingItem], None] | None = None) -> DraftingRun:
    """Draft a started or queued run in this process (the management command without a worker)."""
    run = DraftingRun.objects.get(pk=run_id)
    if run.started_at is None:
        DraftingRun.objects.filter(pk=run_id).update(started_at=timezone.now())
    for chunk in chunks_pending(run):
        chunk_process(run_id=run_id, chunk=chunk, worker="inline", on_item=on_item)
    run_finish_if_done(run_id=run_id)
    run.refresh_from_db()
    return run


def _item_draft(run: DraftingRun, drafter: Drafter, item_id: int, worker: str) -> DraftingItem | None:
    token = job_token()
    claimed = job_claim(
        rows=DraftingItem.objects.filter(pk=item_id, status=DraftingItem.Status.PENDING),
        token=token,
        worker=worker,
        running=DraftingItem.Status.RUNNING,
        attempts_field="attempts",
        claimed_at=timezone.now(),
    )
    if not claimed:
        return None
    item = DraftingItem.objects.select_related("context", "context__reasoning_type").get(pk=item_id)
    try:
        # The claim's heartbeat is renewed between the model calls of an item (a slow model takes minutes).
        drafter.beat = lambda: job_heartbeat(rows=DraftingItem.objects.filter(pk=item_id), token=token)
        outcome = drafter.draft(item.context)
    except EndpointError as error:
        _, message = describe_endpoint_error(error, base_url=run.endpoint_snapshot.get("base_url", ""))
        raw = getattr(error, "raw_output", {}) or {}
        _item_fail(item, token, message, raw)
        if isinstance(error, EndpointUnauthorized | EndpointConfigError):
            # Every other context would fail the same way: say so on each now instead of calling again.
            DraftingItem.objects.filter(run_id=run.pk, status=DraftingItem.Status.PENDING).update(
                status=DraftingItem.Status.FAILED, error=message, finished_at=timezone.now()
            )
            DraftingRun.objects.filter(pk=run.pk).update(error=message)
        return DraftingItem.objects.get(pk=item_id)
    except Exception as error:
        logger.exception("drafting item %s failed", item_id)
        _item_fail(item, token, f"{type(error).__name__}: {error}", {})
        return DraftingItem.objects.get(pk=item_id)
    try:
        _item_commit(run, item, token, outcome)
    except _ClaimLost:
        logger.info("drafting item %s was taken over by another worker; result dropped", item_id)
        return None
    return DraftingItem.objects.get(pk=item_id)


def _item_fail(item: DraftingItem, token: str, message: str, raw: dict[str, Any]) -> None:
    DraftingItem.objects.filter(pk=item.pk, status=DraftingItem.Status.RUNNING, claim_token=token).update(
        status=DraftingItem.Status.FAILED, error=message[:4000], raw_output=raw, finished_at=timezone.now()
    )


@transaction.atomic
def _item_commit(run: DraftingRun, item: DraftingItem, token: str, outcome: Outcome) -> None:
    """Create the item's drafts and mark it drafted in one transaction: both happen, or neither does."""
    updated = DraftingItem.objects.filter(pk=item.pk, status=DraftingItem.Status.RUNNING, claim_token=token).update(
        status=DraftingItem.Status.DRAFTED,
        error=outcome.note,
        raw_output=outcome.raw_output,
        finished_at=timezone.now(),
        instance_count=len(outcome.drafts),
    )
    if updated != 1:
        raise _ClaimLost(item.pk)
    context = item.context
    first = None
    for fields in outcome.drafts:
        # A draft starts with the suggested answer type and scale, which the annotator confirms or corrects.
        suggested = answer_kind_suggested(
            question=fields.get("question", ""),
            rationale=fields.get("rationale", ""),
            answer=list(fields.get("answer") or []),
            tables=fields.get("relevant_tables") or context.tables.all(),
            tools=[action.get("tool", "") for action in fields.get("essential_actions") or []],
        )
        fields = {**suggested, **fields}
        # The draft keeps every field the annotator may change, so what they changed can be measured later.
        fields["draft"] = {
            **fields.get("draft", {}),
            "answer_type": fields.get("answer_type", ""),
            "scale": fields.get("scale", ""),
            "relevant_table_ids": sorted(table.pk for table in fields.get("relevant_tables") or []),
        }
        instance = instance_create(
            project_id=run.project_id,
            actor=None,
            initial_status=Status.DRAFTED,
            reason=f"drafted by run {run.pk}",
            context=context,
            batch_id=context.batch_id or run.batch_id,
            **fields,
        )
        first = first or instance
    if first is not None:
        DraftingItem.objects.filter(pk=item.pk).update(instance=first)

"""Drafting one chunk on a worker: claim each item by its token, draft it, and commit its drafts and its "drafted"
in one transaction, so an item is drafted exactly once however often its message comes."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from curation.drafting.endpoints import describe_endpoint_error
from curation.drafting.models import DraftingItem, DraftingRun
from curation.drafting.services.drafter import Drafter, Outcome, repeats_dropped
from curation.drafting.services.jobs import DRAFTING_ITEMS
from curation.drafting.services.runs import OPEN_ITEM_STATES, chunks_pending, run_finish_if_done
from curation.drafting.signals import drafts_committed
from curation.endpoints.errors import EndpointConfigError, EndpointError, EndpointUnauthorized
from curation.jobs import JobTakenOver, job_heartbeating
from curation.models import Paper
from curation.services.instances import answer_kind_suggested
from curation.services.lifecycle import instance_create
from curation.states import Status
from curation.transient import TransientOutage, is_transient, transient_call

logger = logging.getLogger(__name__)


def chunk_process(
    *, run_id: int, chunk: int, worker: str = "", on_item: Callable[[DraftingItem], None] | None = None
) -> int:
    """Draft the pending items of one chunk, each committed on its own; returns how many this call drafted.

    A broker, cache, semaphore or database outage that outlasts the retries (curation/transient.py) hands the item
    back untouched and raises TransientOutage, so the task sends the chunk again: never an item's failure."""
    run = transient_call(DraftingRun.objects.select_related("project", "endpoint").filter(pk=run_id).first)
    if run is None or not run.is_active:
        return 0
    transient_call(
        DraftingRun.objects.filter(pk=run_id, status=DraftingRun.Status.QUEUED).update,
        status=DraftingRun.Status.RUNNING,
    )
    pending = DraftingItem.objects.filter(run_id=run_id, chunk=chunk, status=DraftingItem.Status.PENDING)
    item_ids = transient_call(lambda: list(pending.order_by("pk").values_list("pk", flat=True)))
    if not item_ids:
        transient_call(run_finish_if_done, run_id=run_id)
        return 0
    # Stamp the chunk with this worker and a heartbeat, renewed every beat (from a side thread, so a slow model call
    # keeps it) and after each item: a worker that vanishes leaves a stale heartbeat, and the reaper requeues the
    # chunk (a restart under the same name, or a shutdown, hands it back at once).
    transient_call(pending.filter(pk__in=item_ids).update, worker=worker, heartbeat_at=timezone.now())
    held = DraftingItem.objects.filter(run_id=run_id, chunk=chunk, worker=worker, status__in=OPEN_ITEM_STATES)
    with job_heartbeating(lambda: bool(held.update(heartbeat_at=timezone.now()))):
        drafted = _items_draft(run, item_ids, worker=worker, held=held, on_item=on_item)
    transient_call(run_finish_if_done, run_id=run_id)
    return drafted


def lanes_width(run: DraftingRun, items: int) -> int:
    """How many of a chunk's items are drafted at once: for an LLM run twice its endpoint's concurrency limit (while
    some lanes read, check or commit, the others hold every request slot; the shared limiter still bounds what is in
    flight), else one. Inside an atomic block one, in this thread: other connections could not see its rows."""
    if run.kind != DraftingRun.Kind.LLM or run.endpoint is None or transaction.get_connection().in_atomic_block:
        return 1
    return max(1, min(items, 2 * run.endpoint.concurrency_limit))


def _items_draft(
    run: DraftingRun, item_ids: list[int], *, worker: str, held: Any, on_item: Callable[[DraftingItem], None] | None
) -> int:
    """Draft `item_ids` in `lanes_width` lanes, each item claimed and committed on its own. A lane takes every item of
    one paper in turn, so no two items of a paper in a chunk are drafted at once: an LLM question's duplicate check
    reads what was already asked of its paper (two chunks may still draft one paper at once: `_item_commit` checks
    again). A cancelled run or an outage stops every lane after its current item; the outage
    (or any error) is raised here."""
    width = lanes_width(run, len(item_ids))
    of_chunk = DraftingItem.objects.filter(pk__in=item_ids)
    papers = dict(transient_call(lambda: list(of_chunk.values_list("pk", "context__paper_id")))) if width > 1 else {}
    groups: dict[object, list[int]] = {}
    for item_id in item_ids:
        groups.setdefault(papers.get(item_id) or ("item", item_id), []).append(item_id)
    work: queue.SimpleQueue[list[int]] = queue.SimpleQueue()
    for group in groups.values():
        work.put(group)
    stop, lock = threading.Event(), threading.Lock()
    state: dict[str, Any] = {"drafted": 0, "error": None}

    def lane() -> None:
        drafter = Drafter(run)
        try:
            while not stop.is_set():
                try:
                    group = work.get_nowait()
                except queue.Empty:
                    break
                for item_id in group:
                    running = DraftingRun.objects.filter(pk=run.pk, status=DraftingRun.Status.RUNNING)
                    if stop.is_set() or not transient_call(running.exists):
                        stop.set()
                        break
                    item = _item_draft(run, drafter, item_id, worker)
                    transient_call(held.update, heartbeat_at=timezone.now())
                    if item is not None:
                        with lock:
                            state["drafted"] += item.status == DraftingItem.Status.DRAFTED
                            if on_item is not None:
                                on_item(item)
        except BaseException as error:
            with lock:
                state["error"] = state["error"] or error
            stop.set()
        finally:
            if width > 1:
                connection.close()  # this lane's own connection

    if width == 1:
        lane()
    else:
        lanes = [threading.Thread(target=lane, name=f"drafting-{run.pk}-{n}", daemon=True) for n in range(width)]
        for thread in lanes:
            thread.start()
        for thread in lanes:
            thread.join()
    if state["error"] is not None:
        raise state["error"]
    return state["drafted"]


def run_work(*, run_id: int, chunk: int, worker: str = "", budget_s: float = 600.0) -> int:
    """Draft a chunk, then keep taking the run's pending chunks that no worker has begun while `budget_s` lasts;
    returns how many items this call drafted. Called by the task.

    The item rows, not the messages, are the record of work: a lost message (a broker restarted without its data)
    never leaves a run unfinished while a worker is on it, and the messages of chunks taken this way find nothing
    pending and exit quietly."""
    started = time.monotonic()
    unbegun = DraftingItem.objects.filter(
        run_id=run_id, run__status__in=DraftingRun.ACTIVE, status=DraftingItem.Status.PENDING, worker=""
    )
    drafted = 0
    following: int | None = chunk
    while following is not None:
        try:
            drafted += chunk_process(run_id=run_id, chunk=following, worker=worker)
        except TransientOutage as outage:
            outage.chunk = following  # type: ignore[attr-defined]  # the chunk to send again
            raise
        if time.monotonic() - started >= budget_s:
            break
        following = transient_call(unbegun.order_by("chunk").values_list("chunk", flat=True).first)
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
    token = transient_call(DRAFTING_ITEMS.take, item_id, worker=worker, claimed_at=timezone.now())
    if token is None:
        return None
    try:
        item = DraftingItem.objects.select_related("context", "context__reasoning_type").get(pk=item_id)
        # The claim's heartbeat is renewed between the model calls of an item too (a slow model takes minutes).
        drafter.beat = lambda: DRAFTING_ITEMS.beat(item_id, token)
        outcome = drafter.draft(item.context)
    except Exception as error:
        if not is_transient(error):
            return _item_failure_record(run, item_id, token, error)
        # An outage is not the item's failure: the item goes back untried (this claim uncounted), the chunk again.
        transient_call(DRAFTING_ITEMS.release, item_id, token, is_outage=True)
        logger.warning("drafting item %s handed back: outage (%s: %s)", item_id, type(error).__name__, error)
        raise TransientOutage(f"{type(error).__name__}: {error}") from error
    try:
        transient_call(_item_commit, run, item, token, outcome)
    except JobTakenOver:
        logger.info("drafting item %s was taken over by another worker; result dropped", item_id)
        return None
    return transient_call(DraftingItem.objects.get, pk=item_id)


def _item_failure_record(run: DraftingRun, item_id: int, token: str, error: Exception) -> DraftingItem:
    """Record why an item could not be drafted: the endpoint's described error, or the exception of a bug."""
    if isinstance(error, EndpointError):
        _, message = describe_endpoint_error(error, base_url=run.endpoint_snapshot.get("base_url", ""))
        raw = getattr(error, "raw_output", {}) or {}
        DRAFTING_ITEMS.fail(item_id, token, message, raw_output=raw)
        if isinstance(error, EndpointUnauthorized | EndpointConfigError):
            # Every other context would fail the same way: say so on each now instead of calling again.
            DraftingItem.objects.filter(run_id=run.pk, status=DraftingItem.Status.PENDING).update(
                status=DraftingItem.Status.FAILED, error=message, finished_at=timezone.now()
            )
            DraftingRun.objects.filter(pk=run.pk).update(error=message)
    else:
        logger.error("drafting item %s failed", item_id, exc_info=error)
        DRAFTING_ITEMS.fail(item_id, token, f"{type(error).__name__}: {error}", raw_output={})
    return DraftingItem.objects.get(pk=item_id)


@transaction.atomic
def _item_commit(run: DraftingRun, item: DraftingItem, token: str, outcome: Outcome) -> None:
    """Create the item's drafts and mark it drafted in one transaction: both happen, or neither does. The commit has
    the last word on repeats: a draft repeating what its paper was asked by now is dropped, and the item says so."""
    context = item.context
    # Contexts of one paper in two chunks are drafted at once, each blind to the other's questions. The paper's row
    # lock (PostgreSQL; on SQLite this transaction holds the write lock from its BEGIN IMMEDIATE) makes one commit
    # wait for the other's, then read what it committed.
    list(Paper.objects.select_for_update().filter(pk=context.paper_id).values_list("pk", flat=True))
    outcome = repeats_dropped(run, context, outcome)
    DRAFTING_ITEMS.finish(
        item.pk, token, error=outcome.note, raw_output=outcome.raw_output, instance_count=len(outcome.drafts)
    )
    first = None
    for fields in outcome.drafts:
        # A draft starts with the suggested answer type and scale, which the annotator confirms or corrects.
        suggested = answer_kind_suggested(
            question=fields.get("question", ""),
            rationale=fields.get("rationale", ""),
            answer=list(fields.get("answer") or []),
            tables=fields.get("relevant_tables") or context.tables.all(),
            actions=fields.get("essential_actions") or [],
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
        drafts_committed.send(sender=DraftingRun, run=run, batch_id=first.batch_id)

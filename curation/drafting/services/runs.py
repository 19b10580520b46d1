"""Drafting runs: creation (one item per short context, in chunks), start, retry, cancel, resume, and finishing
once no item is open. Managers only; each write is one transaction."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from curation.drafting.models import DEFAULT_OPTIONS, DraftingItem, DraftingRun, PromptTemplate
from curation.drafting.selectors import run_queued_behind
from curation.drafting.services.prompt_versions import prompt_template_current
from curation.drafting.templates import TEMPLATES
from curation.endpoints.config import GENERATION_PARAM_NAMES
from curation.endpoints.models import ModelEndpoint
from curation.errors import Conflict, InvalidInput
from curation.jobs import job_enqueue
from curation.models import Batch, Context, Project
from curation.queues import queue_for, waiting_label
from curation.services.contexts import LONG_CONTEXT_REFUSAL
from curation.services.projects import require_role
from curation.states import Role, Status

# What a run records of its endpoint (as it was when the run started; it may be edited or deleted later), with its id.
SNAPSHOT_FIELDS = ("name", "base_url", "model", "generation_params")
OPEN_ITEM_STATES = (DraftingItem.Status.PENDING, DraftingItem.Status.RUNNING)
# The team closed the batch (its work is done): a run adds no drafts to it, as filling it and importing into it
# are refused (curation.batches.services, curation.exchange.draft_import).
CLOSED_BATCH_REFUSAL = (
    "{batches} closed: a closed batch takes no new drafts. Choose a planned or open batch, or contexts that are not "
    "in a closed batch."
)


def _drafted_context_ids(project: Project, kind: str, context_ids: list[int]) -> set[int]:
    """Contexts that already hold a live draft from an earlier run of the same kind."""
    return set(
        DraftingItem.objects.filter(
            run__project=project, run__kind=kind, status=DraftingItem.Status.DRAFTED, context_id__in=context_ids
        )
        .exclude(instance_count=0)
        .exclude(instance__status=Status.DISCARDED)
        .values_list("context_id", flat=True)
    )


@transaction.atomic
def run_create(
    *,
    project: Project,
    actor: AbstractBaseUser | None,
    kind: str,
    batch: Batch | None = None,
    context_ids: list[int] | None = None,
    endpoint: ModelEndpoint | None = None,
    question_template: PromptTemplate | None = None,
    answer_template: PromptTemplate | None = None,
    generation_params: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> DraftingRun:
    """Create a queued run with one item per short context (managers only); already drafted contexts are skipped.

    Long contexts are never drafted: each question's long setting is its short context's whole paper."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="start drafting runs")
    if kind not in DraftingRun.Kind.values:
        raise InvalidInput(f"{kind!r} is not a drafting kind; expected llm or template.")
    merged = {**DEFAULT_OPTIONS, **(options or {})}
    if unknown := set(merged) - set(DEFAULT_OPTIONS):
        raise InvalidInput(f"Unknown options: {', '.join(sorted(unknown))}.")
    if merged["unanswerable"] not in ("skip", "keep"):
        raise InvalidInput("unanswerable must be 'skip' or 'keep'.")
    if bad_ids := set(merged["template_ids"] or []) - {template.template_id for template in TEMPLATES}:
        raise InvalidInput(f"Unknown question templates: {', '.join(sorted(bad_ids))}.")
    if not isinstance(merged["paraphrase_headers"], bool):
        raise InvalidInput("paraphrase_headers must be true or false.")
    for name in ("chunk_size", "per_template", "max_context_chars"):
        if not isinstance(merged[name], int) or merged[name] < 0:
            raise InvalidInput(f"{name} must be a non-negative whole number.")
    if batch is not None and batch.project_id != project.pk:
        raise InvalidInput("The batch belongs to another project.")
    if batch is not None and batch.state == Batch.State.CLOSED:
        raise InvalidInput(CLOSED_BATCH_REFUSAL.format(batches=f"Batch “{batch.name}” is"), detail={"field": "batch"})

    if not context_ids and batch is None:
        raise InvalidInput("Pick a batch or some contexts to draft.")
    contexts = Context.objects.filter(project=project, kind=Context.Kind.SHORT)
    if batch is not None:
        contexts = contexts.filter(batch=batch)
    if context_ids:
        if Context.objects.filter(project=project, pk__in=context_ids, kind=Context.Kind.LONG).exists():
            raise InvalidInput(LONG_CONTEXT_REFUSAL)
        contexts = contexts.filter(pk__in=context_ids)
        if missing := sorted(set(context_ids) - set(contexts.values_list("pk", flat=True))):
            raise InvalidInput(f"Contexts not in this project{' and batch' if batch else ''}: {missing[:20]}.")
    ids = list(contexts.order_by("pk").values_list("pk", flat=True))
    if not ids:  # listed contexts are all found above: only a batch can come up empty
        raise InvalidInput(
            f"Batch “{batch.name}” holds no short contexts yet. Put contexts into it with Batches → Fill a batch "
            "from papers, or enter context ids."
        )
    if batch is None:  # a listed context's draft goes to the context's batch: one of a closed batch would fill it
        closed = Batch.objects.filter(state=Batch.State.CLOSED, contexts__in=contexts)
        if names := sorted(set(closed.values_list("name", flat=True))):
            quoted = ", ".join(f"“{name}”" for name in names[:5])
            batches = f"Batch {quoted} is" if len(names) == 1 else f"Batches {quoted} are"
            raise InvalidInput(CLOSED_BATCH_REFUSAL.format(batches=batches), detail={"field": "contexts"})

    params = dict(generation_params or {})
    if unknown_params := set(params) - GENERATION_PARAM_NAMES:
        raise InvalidInput(f"Unknown generation parameters: {', '.join(sorted(unknown_params))}.")
    snapshot: dict[str, Any] = {}
    hashes: dict[str, str] = {}
    paraphrasing = kind == DraftingRun.Kind.TEMPLATE and merged["paraphrase_headers"]
    if kind == DraftingRun.Kind.LLM or paraphrasing:
        if endpoint is None:
            needs = "An LLM drafting run needs" if kind == DraftingRun.Kind.LLM else "Paraphrasing header names needs"
            raise InvalidInput(f"{needs} a model endpoint.")
        if endpoint.project_id not in (None, project.pk):
            raise InvalidInput("That endpoint belongs to another project.")
        snapshot = {"id": endpoint.pk, **{name: getattr(endpoint, name) for name in SNAPSHOT_FIELDS}}
        params = {**(endpoint.generation_params or {}), **params}
    if paraphrasing:
        # The prompt version is recorded by its hash; the drafter reads that exact version back.
        hashes = {"header_paraphrase": prompt_template_current(project=project, kind="header_paraphrase").content_hash}
        question_template = answer_template = None
    elif kind == DraftingRun.Kind.LLM:
        question_template = question_template or prompt_template_current(project=project, kind="question")
        answer_template = answer_template or prompt_template_current(project=project, kind="rationale_answer")
        for template, expected in ((question_template, "question"), (answer_template, "rationale_answer")):
            if template.project_id != project.pk or template.kind != expected:
                raise InvalidInput(f"Template {template.pk} is not a {expected} template of this project.")
        hashes = {"question": question_template.content_hash, "rationale_answer": answer_template.content_hash}
    else:
        endpoint = question_template = answer_template = None
        params = {}

    merged["chunk_size"] = chunk_size = merged["chunk_size"] or (
        max(4, 2 * endpoint.concurrency_limit) if kind == DraftingRun.Kind.LLM and endpoint is not None else 25
    )
    run = DraftingRun.objects.create(
        project=project,
        kind=kind,
        batch=batch,
        endpoint=endpoint,
        endpoint_snapshot=snapshot,
        question_template=question_template,
        answer_template=answer_template,
        template_hashes=hashes,
        generation_params=params,
        options=merged,
        created_by=actor,
    )
    already = set() if merged["redraft"] else _drafted_context_ids(project, kind, ids)
    pending = [context_id for context_id in ids if context_id not in already]
    chunk_of = {context_id: position // chunk_size for position, context_id in enumerate(pending)}
    skipped = {"status": DraftingItem.Status.SKIPPED, "error": "already drafted by an earlier run"}
    DraftingItem.objects.bulk_create(
        DraftingItem(run=run, context_id=context_id, chunk=chunk_of[context_id])
        if context_id in chunk_of
        else DraftingItem(run=run, context_id=context_id, **skipped)
        for context_id in ids
    )
    return run


def _run_locked(run_id: int, actor: AbstractBaseUser | None, *, action: str) -> DraftingRun:
    """The run, locked for this transaction, once `actor` (None: the system) is found a manager of its project."""
    run = DraftingRun.objects.select_for_update().get(pk=run_id)
    require_role(user=actor, project=run.project, roles=(Role.MANAGER,), action=action)
    return run


def chunks_enqueue(run: DraftingRun, chunks: list[int]) -> None:
    """One message per chunk, sent once the transaction commits (curation/jobs.py)."""
    for chunk in chunks:
        job_enqueue(task_name="curation.drafting_chunk", args=[run.pk, chunk], queue=run.options.get("queue") or None)


def chunks_pending(run: DraftingRun) -> list[int]:
    return sorted(set(run.items.filter(status=DraftingItem.Status.PENDING).values_list("chunk", flat=True)))


@transaction.atomic
def run_start(*, run_id: int, actor: AbstractBaseUser | None, queue: str | None = None) -> DraftingRun:
    """Queue a run's pending chunks for the workers (after commit); finishing at once when nothing is pending."""
    run = _run_locked(run_id, actor, action="start drafting runs")
    if run.status != DraftingRun.Status.QUEUED or run.started_at is not None:
        raise Conflict(f"Run {run.pk} has already been started (it is {run.status}).")
    # The queue is recorded on the run: its chunks go there, and "queued behind N" counts the runs ahead on it.
    run.options = {**run.options, "queue": queue or run.options.get("queue") or queue_for("curation.drafting_chunk")}
    run.started_at = timezone.now()
    run.save(update_fields=["options", "started_at"])
    chunks = chunks_pending(run)
    if chunks:
        chunks_enqueue(run, chunks)
    else:
        DraftingRun.objects.filter(pk=run.pk).update(status=DraftingRun.Status.RUNNING)
        run_finish_if_done(run_id=run.pk)
    run.refresh_from_db()
    return run


@transaction.atomic
def run_retry_failed(*, run_id: int, actor: AbstractBaseUser | None) -> DraftingRun:
    """Put a finished run's failed items back to pending and queue them again (managers only)."""
    run = _run_locked(run_id, actor, action="retry drafting runs")
    if run.status == DraftingRun.Status.CANCELLED:
        raise Conflict("A cancelled run cannot be retried; start a new run instead.")
    retried = run.items.filter(status=DraftingItem.Status.FAILED).update(
        status=DraftingItem.Status.PENDING, claim_token="", worker=""
    )
    if not retried:
        raise InvalidInput("This run has no failed contexts to retry.")
    run.status = DraftingRun.Status.RUNNING if run.started_at else DraftingRun.Status.QUEUED
    run.error = ""
    run.finished_at = None
    run.save(update_fields=["status", "error", "finished_at"])
    if run.started_at:
        chunks_enqueue(run, chunks_pending(run))
    return run


@transaction.atomic
def run_cancel(*, run_id: int, actor: AbstractBaseUser | None) -> DraftingRun:
    """Stop a run: pending items are cancelled, an item being drafted finishes; drafts made so far stay."""
    run = _run_locked(run_id, actor, action="cancel drafting runs")
    if not run.is_active:
        raise Conflict(f"Run {run.pk} is {run.status} already.")
    run.items.filter(status=DraftingItem.Status.PENDING).update(status=DraftingItem.Status.CANCELLED)
    run.status = DraftingRun.Status.CANCELLED
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at"])
    return run


@transaction.atomic
def run_resume(*, run_id: int, actor: AbstractBaseUser | None) -> DraftingRun:
    """Requeue every open item of a stalled run (a worker vanished); items already drafted are never redone."""
    run = _run_locked(run_id, actor, action="resume drafting runs")
    if not run.is_active or run.started_at is None:
        raise Conflict(f"Run {run.pk} is not running.")
    run.items.filter(status=DraftingItem.Status.RUNNING).update(status=DraftingItem.Status.PENDING, claim_token="")
    chunks_enqueue(run, chunks_pending(run))
    return run


def run_counts(run: DraftingRun) -> dict[str, int]:
    """Items per status, plus the total, the number of drafts made, and of the items done (status drafted) those
    that made no draft (`no_draft`: no template drafts their type, or the model gave nothing usable)."""
    counts = dict.fromkeys(DraftingItem.Status.values, 0)
    counts.update(run.items.values_list("status").annotate(n=Count("id")))
    counts["total"] = sum(counts.values())
    counts["instances"] = sum(run.items.values_list("instance_count", flat=True))
    counts["no_draft"] = run.items.filter(status=DraftingItem.Status.DRAFTED, instance_count=0).count()
    return counts


# What a manager may do to a run once it exists, by the name pages and API routes use.
RUN_ACTIONS = {"retry": run_retry_failed, "cancel": run_cancel, "resume": run_resume}


def run_progress(run: DraftingRun) -> dict[str, Any]:
    """A run's progress as pages and API show it: items per status (`counts`), the share of its items not skipped
    that are done (`percent`), and while no item has begun its place in its queue (`queued_behind`, `waiting`)."""
    counts = run_counts(run)
    open_total = counts["total"] - counts["skipped"]
    done = counts["drafted"] + counts["failed"] + counts["cancelled"]
    queued_behind = run_queued_behind(run)
    return {
        "counts": counts,
        "percent": round(100 * done / open_total) if open_total else 100,
        "queued_behind": queued_behind,
        "waiting": waiting_label(queued_behind),
    }


def run_finish_if_done(*, run_id: int) -> bool:
    """Mark a running run completed (or failed, naming its failures) once no item is open; True if it finished."""
    if DraftingItem.objects.filter(run_id=run_id, status__in=OPEN_ITEM_STATES).exists():
        return False
    failed = DraftingItem.objects.filter(run_id=run_id, status=DraftingItem.Status.FAILED).order_by("pk")
    error = ""
    if failed_count := failed.count():
        total = DraftingItem.objects.filter(run_id=run_id).exclude(status=DraftingItem.Status.SKIPPED).count()
        first = failed.values_list("error", flat=True).first() or ""
        error = f"{failed_count} of {total} contexts failed. First error: {first}"
    status = DraftingRun.Status.FAILED if failed_count else DraftingRun.Status.COMPLETED
    updated = DraftingRun.objects.filter(pk=run_id, status__in=DraftingRun.ACTIVE).update(
        status=status, finished_at=timezone.now(), error=error
    )
    return bool(updated)

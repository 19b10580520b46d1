"""Drafting writes: prompt template versions, run creation/start/retry/cancel, and drafting one item exactly once."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from curation.drafting import duplicates, prompts
from curation.drafting.endpoints import describe_endpoint_error
from curation.drafting.models import DraftingItem, DraftingRun, PromptTemplate
from curation.drafting.templates import TEMPLATES, draft_template_questions
from curation.endpoints.config import GENERATION_PARAM_NAMES
from curation.endpoints.errors import EndpointConfigError, EndpointError, EndpointUnauthorized
from curation.endpoints.models import ModelEndpoint
from curation.errors import Conflict, InvalidInput
from curation.jobs import job_claim, job_enqueue, job_heartbeat, job_reap, job_stall_cutoff, job_token
from curation.models import Batch, Context, Instance, Project, ReasoningType, Table
from curation.queues import queue_for
from curation.services.contexts import LONG_CONTEXT_REFUSAL
from curation.services.instances import answer_kind_suggested
from curation.services.lifecycle import instance_create
from curation.services.projects import require_role
from curation.states import Role, Status
from curation.table_shape import shape_from_row

logger = logging.getLogger(__name__)

DEFAULT_OPTIONS: dict[str, Any] = {
    "redraft": False,  # draft contexts that already have a draft of this kind
    "chunk_size": 0,  # 0: 4 contexts a task for LLM runs, 25 for template runs
    "seed": 0,
    "per_template": 1,
    "unanswerable": "skip",  # or "keep": kept as drafts marked for the unanswerable split
    "template_ids": [],  # empty: every template
    "max_context_chars": 8000,
    "queue": "",  # Celery queue; empty for settings.TATCURATE_DRAFTING_QUEUE (curation/queues.py)
}
TEMPLATE_IDS = [template.template_id for template in TEMPLATES]
OPEN_ITEM_STATES = (DraftingItem.Status.PENDING, DraftingItem.Status.RUNNING)


# Prompt templates ------------------------------------------------------------------------------------------


def prompt_templates_ensure_defaults(*, project: Project) -> None:
    """Give a project the default templates of every kind it lacks (idempotent)."""
    for kind, (name, text) in prompts.DEFAULT_TEMPLATES.items():
        if not PromptTemplate.objects.filter(project=project, kind=kind).exists():
            PromptTemplate.objects.create(
                project=project, kind=kind, name=name, text=text, content_hash=prompts.content_hash(text)
            )


def prompt_template_current(*, project: Project, kind: str) -> PromptTemplate:
    """The latest version of a project's template of `kind`, creating the defaults first when none exist."""
    if kind not in PromptTemplate.Kind.values:
        raise InvalidInput(f"{kind!r} is not a template kind; expected one of {', '.join(PromptTemplate.Kind.values)}.")
    current = PromptTemplate.objects.filter(project=project, kind=kind).order_by("-created_at", "-id").first()
    if current is None:
        prompt_templates_ensure_defaults(project=project)
        current = PromptTemplate.objects.filter(project=project, kind=kind).order_by("-created_at", "-id").first()
    assert current is not None
    return current


@transaction.atomic
def prompt_template_save(
    *, project: Project, actor: AbstractBaseUser, kind: str, text: str, name: str = "", note: str = ""
) -> PromptTemplate:
    """Save a new version of a template (managers only); saving the current text again changes nothing."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="edit prompt templates")
    text = text.replace("\r\n", "\n")
    if not text.strip():
        raise InvalidInput("A prompt template cannot be empty.")
    current = prompt_template_current(project=project, kind=kind)
    digest = prompts.content_hash(text)
    if digest == current.content_hash and (not name or name == current.name):
        return current
    required = {"question": ("context",), "rationale_answer": ("question", "context"), "header_paraphrase": ("header",)}
    missing = [key for key in required.get(kind, ()) if "{{" + key + "}}" not in text.replace(" ", "")]
    if missing:
        raise InvalidInput(f"The template must contain {', '.join('{{' + key + '}}' for key in missing)}.")
    return PromptTemplate.objects.create(
        project=project,
        kind=kind,
        name=name or current.name,
        text=text,
        content_hash=digest,
        note=note,
        created_by=actor,
    )


# Runs --------------------------------------------------------------------------------------------------------


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
    if actor is not None:
        require_role(user=actor, project=project, roles=(Role.MANAGER,), action="start drafting runs")
    if kind not in DraftingRun.Kind.values:
        raise InvalidInput(f"{kind!r} is not a drafting kind; expected llm or template.")
    merged = {**DEFAULT_OPTIONS, **(options or {})}
    unknown = set(merged) - set(DEFAULT_OPTIONS)
    if unknown:
        raise InvalidInput(f"Unknown options: {', '.join(sorted(unknown))}.")
    if merged["unanswerable"] not in ("skip", "keep"):
        raise InvalidInput("unanswerable must be 'skip' or 'keep'.")
    bad_ids = set(merged["template_ids"] or []) - set(TEMPLATE_IDS)
    if bad_ids:
        raise InvalidInput(f"Unknown question templates: {', '.join(sorted(bad_ids))}.")
    for name in ("chunk_size", "per_template", "max_context_chars"):
        if not isinstance(merged[name], int) or merged[name] < 0:
            raise InvalidInput(f"{name} must be a non-negative whole number.")
    if batch is not None and batch.project_id != project.pk:
        raise InvalidInput("The batch belongs to another project.")

    contexts = Context.objects.filter(project=project, kind=Context.Kind.SHORT)
    if context_ids:
        if Context.objects.filter(project=project, pk__in=context_ids, kind=Context.Kind.LONG).exists():
            raise InvalidInput(LONG_CONTEXT_REFUSAL)
        contexts = contexts.filter(pk__in=context_ids)
        if batch is not None:
            contexts = contexts.filter(batch=batch)
        found = set(contexts.values_list("pk", flat=True))
        missing = sorted(set(context_ids) - found)
        if missing:
            raise InvalidInput(f"Contexts not in this project{' and batch' if batch else ''}: {missing[:20]}.")
    elif batch is not None:
        contexts = contexts.filter(batch=batch)
    else:
        raise InvalidInput("Pick a batch or some contexts to draft.")
    ids = list(contexts.order_by("pk").values_list("pk", flat=True))
    if not ids and batch is not None and not context_ids:
        raise InvalidInput(
            f"Batch “{batch.name}” holds no short contexts yet. Put contexts into it with Batches → Fill a batch "
            "from papers, or enter context ids."
        )
    if not ids:
        raise InvalidInput("There are no short contexts to draft in that selection.")

    params = dict(generation_params or {})
    unknown_params = set(params) - GENERATION_PARAM_NAMES
    if unknown_params:
        raise InvalidInput(f"Unknown generation parameters: {', '.join(sorted(unknown_params))}.")
    snapshot: dict[str, Any] = {}
    hashes: dict[str, str] = {}
    if kind == DraftingRun.Kind.LLM:
        if endpoint is None:
            raise InvalidInput("An LLM drafting run needs a model endpoint.")
        if endpoint.project_id not in (None, project.pk):
            raise InvalidInput("That endpoint belongs to another project.")
        question_template = question_template or prompt_template_current(project=project, kind="question")
        answer_template = answer_template or prompt_template_current(project=project, kind="rationale_answer")
        for template, expected in ((question_template, "question"), (answer_template, "rationale_answer")):
            if template.project_id != project.pk or template.kind != expected:
                raise InvalidInput(f"Template {template.pk} is not a {expected} template of this project.")
        hashes = {"question": question_template.content_hash, "rationale_answer": answer_template.content_hash}
        snapshot = {
            "id": endpoint.pk,
            "name": endpoint.name,
            "base_url": endpoint.base_url,
            "model": endpoint.model,
            "generation_params": endpoint.generation_params,
        }
        params = {**(endpoint.generation_params or {}), **params}
    else:
        endpoint = question_template = answer_template = None
        params = {}

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
    chunk_size = merged["chunk_size"] or (4 if kind == DraftingRun.Kind.LLM else 25)
    items = []
    position = 0
    for context_id in ids:
        if context_id in already:
            items.append(
                DraftingItem(
                    run=run,
                    context_id=context_id,
                    status=DraftingItem.Status.SKIPPED,
                    error="already drafted by an earlier run",
                )
            )
            continue
        items.append(DraftingItem(run=run, context_id=context_id, chunk=position // chunk_size))
        position += 1
    DraftingItem.objects.bulk_create(items)
    return run


def _enqueue_chunks(run: DraftingRun, chunks: list[int]) -> None:
    """One message per chunk, sent once the transaction commits (curation/jobs.py)."""
    for chunk in chunks:
        job_enqueue(task_name="curation.drafting_chunk", args=[run.pk, chunk], queue=run.options.get("queue") or None)


def _pending_chunks(run: DraftingRun) -> list[int]:
    return sorted(set(run.items.filter(status=DraftingItem.Status.PENDING).values_list("chunk", flat=True)))


@transaction.atomic
def run_start(*, run_id: int, actor: AbstractBaseUser | None, queue: str | None = None) -> DraftingRun:
    """Queue a run's pending chunks for the workers (after commit); finishing at once when nothing is pending."""
    run = DraftingRun.objects.select_for_update().get(pk=run_id)
    if actor is not None:
        require_role(user=actor, project=run.project, roles=(Role.MANAGER,), action="start drafting runs")
    if run.status != DraftingRun.Status.QUEUED or run.started_at is not None:
        raise Conflict(f"Run {run.pk} has already been started (it is {run.status}).")
    # The queue is recorded on the run: its chunks go there, and "queued behind N" counts the runs ahead on it.
    run.options = {**run.options, "queue": queue or run.options.get("queue") or queue_for("curation.drafting_chunk")}
    run.started_at = timezone.now()
    run.save(update_fields=["options", "started_at"])
    chunks = _pending_chunks(run)
    if chunks:
        _enqueue_chunks(run, chunks)
    else:
        DraftingRun.objects.filter(pk=run.pk).update(status=DraftingRun.Status.RUNNING)
        run_finish_if_done(run_id=run.pk)
    run.refresh_from_db()
    return run


@transaction.atomic
def run_retry_failed(*, run_id: int, actor: AbstractBaseUser | None) -> DraftingRun:
    """Put a finished run's failed items back to pending and queue them again (managers only)."""
    run = DraftingRun.objects.select_for_update().get(pk=run_id)
    if actor is not None:
        require_role(user=actor, project=run.project, roles=(Role.MANAGER,), action="retry drafting runs")
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
        _enqueue_chunks(run, _pending_chunks(run))
    return run


@transaction.atomic
def run_cancel(*, run_id: int, actor: AbstractBaseUser | None) -> DraftingRun:
    """Stop a run: pending items are cancelled, an item being drafted finishes; drafts made so far stay."""
    run = DraftingRun.objects.select_for_update().get(pk=run_id)
    if actor is not None:
        require_role(user=actor, project=run.project, roles=(Role.MANAGER,), action="cancel drafting runs")
    if not run.is_active:
        raise Conflict(f"Run {run.pk} is {run.status} already.")
    run.items.filter(status=DraftingItem.Status.PENDING).update(status=DraftingItem.Status.CANCELLED)
    run.status = DraftingRun.Status.CANCELLED
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at"])
    return run


def runs_resume_for_worker(*, worker: str) -> int:
    """Requeue work a restarted worker (same hostname) left behind; the item rows make the requeue harmless."""
    active = (DraftingRun.Status.QUEUED, DraftingRun.Status.RUNNING)
    stale = DraftingItem.objects.filter(worker=worker, status__in=OPEN_ITEM_STATES, run__status__in=active)
    by_run: dict[int, set[int]] = {}
    for run_id, chunk in stale.values_list("run_id", "chunk"):
        by_run.setdefault(run_id, set()).add(chunk)
    with transaction.atomic():
        stale.filter(status=DraftingItem.Status.RUNNING).update(status=DraftingItem.Status.PENDING, claim_token="")
        for run in DraftingRun.objects.filter(pk__in=by_run):
            _enqueue_chunks(run, sorted(by_run[run.pk]))
    return sum(len(chunks) for chunks in by_run.values())


def items_reap(*, stall_s: float | None = None) -> int:
    """Requeue the chunks of started runs whose worker went silent (its heartbeat on the items is stale, whatever
    the new worker is called); an item claimed TATCURATE_JOB_MAX_ATTEMPTS times fails instead. Returns how many
    items were reaped. Run by the beat reaper (curation.jobs_reap)."""
    stall_s = settings.TATCURATE_JOB_STALL_S if stall_s is None else stall_s
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
            _enqueue_chunks(run, sorted(by_run[run.pk]))
    for run_id in {item.run_id for item in failed}:
        run_finish_if_done(run_id=run_id)
    return len(requeued) + len(failed)


@transaction.atomic
def run_resume(*, run_id: int, actor: AbstractBaseUser | None) -> DraftingRun:
    """Requeue every open item of a stalled run (a worker vanished); items already drafted are never redone."""
    run = DraftingRun.objects.select_for_update().get(pk=run_id)
    if actor is not None:
        require_role(user=actor, project=run.project, roles=(Role.MANAGER,), action="resume drafting runs")
    if not run.is_active or run.started_at is None:
        raise Conflict(f"Run {run.pk} is not running.")
    run.items.filter(status=DraftingItem.Status.RUNNING).update(status=DraftingItem.Status.PENDING, claim_token="")
    _enqueue_chunks(run, _pending_chunks(run))
    return run


def run_counts(run: DraftingRun) -> dict[str, int]:
    """Items per status, plus the total and the number of drafts made."""
    counts = {state: 0 for state in DraftingItem.Status.values}
    for row in run.items.values("status").annotate(n=Count("id")):
        counts[row["status"]] = row["n"]
    counts["total"] = sum(counts[state] for state in DraftingItem.Status.values)
    counts["instances"] = sum(run.items.values_list("instance_count", flat=True))
    return counts


def run_finish_if_done(*, run_id: int) -> bool:
    """Mark a running run completed (or failed, naming its failures) once no item is open; True if it finished."""
    if DraftingItem.objects.filter(run_id=run_id, status__in=OPEN_ITEM_STATES).exists():
        return False
    failed = DraftingItem.objects.filter(run_id=run_id, status=DraftingItem.Status.FAILED)
    failed_count = failed.count()
    total = DraftingItem.objects.filter(run_id=run_id).exclude(status=DraftingItem.Status.SKIPPED).count()
    status = DraftingRun.Status.FAILED if failed_count else DraftingRun.Status.COMPLETED
    error = ""
    if failed_count:
        first = failed.order_by("pk").values_list("error", flat=True).first() or ""
        error = f"{failed_count} of {total} contexts failed. First error: {first}"
    updated = DraftingRun.objects.filter(
        pk=run_id, status__in=(DraftingRun.Status.QUEUED, DraftingRun.Status.RUNNING)
    ).update(status=status, finished_at=timezone.now(), error=error)
    return bool(updated)


# Drafting one chunk ----------------------------------------------------------------------------------------


class _ClaimLost(Exception):
    """Another worker took the item over (it was requeued); this worker's result is dropped."""


@dataclass
class _Outcome:
    drafts: list[dict[str, Any]]
    raw_output: dict[str, Any]
    note: str = ""


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
    drafter = _Drafter(run)
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
    for chunk in _pending_chunks(run):
        chunk_process(run_id=run_id, chunk=chunk, worker="inline", on_item=on_item)
    run_finish_if_done(run_id=run_id)
    run.refresh_from_db()
    return run


def _item_draft(run: DraftingRun, drafter: _Drafter, item_id: int, worker: str) -> DraftingItem | None:
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
def _item_commit(run: DraftingRun, item: DraftingItem, token: str, outcome: _Outcome) -> None:
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


class _Drafter:
    """Turns one context into draft fields, for an LLM run (one client per chunk) or a template run."""

    def __init__(self, run: DraftingRun) -> None:
        self.run = run
        self.client = None
        self.beat: Callable[[], object] = lambda: None
        self.types = {rt.code: rt for rt in ReasoningType.objects.filter(project_id=run.project_id)}

    def _client(self) -> Any:
        # Built on first use, so a broken endpoint fails the item (with its message), not the whole task.
        # client_for shares one client per endpoint and process: never close it here.
        if self.client is None:
            from curation.endpoints.django_client import client_for

            if self.run.endpoint is None:
                raise EndpointConfigError("the run's endpoint has been deleted")
            self.client = client_for(self.run.endpoint)
        return self.client

    def draft(self, context: Context) -> _Outcome:
        if self.run.kind == DraftingRun.Kind.LLM:
            return self._draft_llm(context)
        return self._draft_templates(context)

    def _provenance(self, item_context: Context) -> dict[str, Any]:
        return {"drafter": self.run.kind, "run": self.run.pk, "context": item_context.pk}

    def _draft_llm(self, context: Context) -> _Outcome:
        client = self._client()
        run = self.run
        data = context_data(context)
        max_chars = int(run.options.get("max_context_chars") or 8000)
        params = {k: v for k, v in run.generation_params.items() if k in GENERATION_PARAM_NAMES}
        raw: dict[str, Any] = {}
        question_result = None
        try:
            question_result = client.chat(
                prompts.question_messages(run.question_template.text, data, max_chars=max_chars), **params
            )
            raw["question"] = question_result.text
            self.beat()
            parsed_question = prompts.parse_question(question_result.text)
            answer_result = None
            parsed_answer = None
            duplicate = self._duplicate(context, parsed_question.question) if parsed_question.is_parsed else None
            if duplicate is not None:
                # Rejected before its answer is asked for: recorded on the item with the reason, never queued.
                rejected = {
                    "question": parsed_question.question,
                    "reason": duplicate.reason,
                    "kind": duplicate.kind,
                    "matched": duplicate.matched,
                    "similarity": round(duplicate.similarity, 4),
                    "measure": duplicate.measure,
                }
                return _Outcome(
                    drafts=[], raw_output={**raw, "rejected": [rejected]}, note=f"rejected: {duplicate.reason}"
                )
            if parsed_question.is_parsed:
                answer_result = client.chat(
                    prompts.answer_messages(
                        run.answer_template.text, data, parsed_question.question, max_chars=max_chars
                    ),
                    **params,
                )
                raw["rationale_answer"] = answer_result.text
                parsed_answer = prompts.parse_rationale_answer(answer_result.text)
        except EndpointError as error:
            error.raw_output = raw  # type: ignore[attr-defined]
            raise
        parse_errors = []
        if not parsed_question.is_parsed:
            parse_errors.append(f"question: {parsed_question.error}")
        if parsed_answer is not None and not parsed_answer.is_parsed:
            parse_errors.append(f"answer: {parsed_answer.error}")
        results = [r for r in (question_result, answer_result) if r is not None]
        draft = {
            **self._provenance(context),
            "endpoint": run.endpoint_snapshot,
            "model": str(question_result.raw.get("model") or run.endpoint_snapshot.get("model", "")),
            "template_hashes": run.template_hashes,
            "params": question_result.request_params,
            "raw": raw,
            "question": parsed_question.question,
            "rationale": parsed_answer.rationale if parsed_answer else "",
            "answer": parsed_answer.answer if parsed_answer else [],
            "parse": {
                "question_rule": parsed_question.rule,
                "answer_rule": parsed_answer.rule if parsed_answer else "",
                "extra_questions": parsed_question.extra_questions,
            },
            "usage": [r.usage for r in results],
            "attempts": sum(len(r.attempts) for r in results),
            "is_cached": [r.is_cached for r in results],
        }
        if parse_errors:
            draft["parse_error"] = "; ".join(parse_errors)
        fields = {
            "reasoning_type": context.reasoning_type,
            "question": parsed_question.question,
            "rationale": parsed_answer.rationale if parsed_answer else "",
            "answer": parsed_answer.answer if parsed_answer else [],
            "relevant_tables": list(context.tables.all()),
            "draft": draft,
        }
        note = f"parse problem, flagged for the annotator: {draft['parse_error']}" if parse_errors else ""
        return _Outcome(drafts=[fields], raw_output=raw, note=note)

    def _duplicate(self, context: Context, question: str) -> duplicates.Duplicate | None:
        """Whether an LLM's question repeats an example of the run's prompt or a question already asked of the
        same paper (any status but discarded)."""
        existing = (
            Instance.objects.filter(project_id=self.run.project_id, context__paper_id=context.paper_id)
            .exclude(status=Status.DISCARDED)
            .values_list("question", flat=True)
        )
        return duplicates.duplicate_of(
            question, examples=duplicates.example_questions(self.run.question_template.text), existing=list(existing)
        )

    def _draft_templates(self, context: Context) -> _Outcome:
        run = self.run
        tables = list(context.tables.all().order_by("paper_id", "order"))
        by_label: dict[str, Table] = {}
        table_dicts = []
        for position, table in enumerate(tables):
            label = table.label or (f"Table {table.number}" if table.number else f"Table {position + 1}")
            if label in by_label:
                label = f"{label} ({position + 1})"
            by_label[label] = table
            table_dicts.append(table_input(table, label))
        options = run.options
        results = draft_template_questions(
            table_dicts,
            seed=int(options.get("seed") or 0),
            per_template=int(options.get("per_template") or 1),
            include_unanswerable=options.get("unanswerable") == "keep",
            template_ids=options.get("template_ids") or None,
        )
        drafts = []
        for result in results:
            draft = {
                **self._provenance(context),
                "template_id": result["template_id"],
                "phrasing_index": result["phrasing_index"],
                "reasoning_subtype": result["reasoning_subtype"],
                "slots": result["slots"],
                "is_answerable": result["is_answerable"],
                "split": "answerable" if result["is_answerable"] else "unanswerable",
                "seed": options.get("seed", 0),
                "question": result["question"],
                "answer": result["answer"],
            }
            drafts.append(
                {
                    "reasoning_type": self.types.get(result["reasoning_subtype"]) or context.reasoning_type,
                    "question": result["question"],
                    "answer": result["answer"],
                    "answer_form": result["answer_form"],
                    "answer_source": result["answer_source"],
                    "essential_actions": result["essential_actions"],
                    "is_answerable": result["is_answerable"],
                    "unanswerable_reason": ""
                    if result["is_answerable"]
                    else "A cell the question needs is empty or not a number in the table (template drafter).",
                    "relevant_tables": [by_label[label] for label in result["relevant_tables"] if label in by_label],
                    "draft": draft,
                }
            )
        note = "" if drafts else "no question template fits this context's tables"
        return _Outcome(drafts=drafts, raw_output={"templates": len(drafts)}, note=note)


def table_input(table: Table, label: str) -> dict[str, Any]:
    """A stored table as the tool box reads it: the flattened header row over the body rows (as scoring's)."""
    return shape_from_row(table).tool_input(label)


def context_data(context: Context) -> prompts.ContextData:
    """The plain data a drafting prompt shows of a context (short: paragraph + its tables; long: the paper)."""
    tables = list(context.tables.all().order_by("paper_id", "order"))
    if context.kind == Context.Kind.LONG:
        paragraphs = list(context.paper.paragraphs.order_by("order").values_list("text", flat=True))
        if not tables:
            tables = list(context.paper.tables.order_by("order"))
    else:
        paragraphs = [context.paragraph.text] if context.paragraph_id else []
    reasoning_type = context.reasoning_type
    parent = reasoning_type.parent if reasoning_type is not None and reasoning_type.parent_id else None
    return prompts.ContextData(
        tables=[
            prompts.TableData(label=t.label, caption=t.caption, rows=shape_from_row(t).prompt_rows(), number=t.number)
            for t in tables
        ],
        paragraphs=paragraphs,
        reasoning_type=reasoning_type.name if reasoning_type else "",
        reasoning_type_code=reasoning_type.code if reasoning_type else "",
        reasoning_description=reasoning_type.description if reasoning_type else "",
        parent_code=parent.code if parent else "",
    )

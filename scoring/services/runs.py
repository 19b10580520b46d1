"""Scoring runs: create (config hash), start, chunk processing on workers, pause/resume/cancel/retry, reaper, results.

Invariants: one Prediction per (run, item), written by an upsert the moment it is ready, so a killed worker loses only
its in-flight requests; a chunk is processed by whoever holds its claim token (a compare-and-set on the chunk row),
so a redelivered or duplicated task exits quietly; the run's status changes only by compare-and-set.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import socket
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache as django_cache
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from curation.endpoints.client import ChatClient
from curation.endpoints.django_client import limiter_options
from curation.endpoints.errors import EndpointError
from curation.errors import Conflict, InvalidInput, NotPermitted
from curation.jobs import job_claim, job_enqueue, job_heartbeat, job_reap, job_release, job_stall_cutoff, job_token
from curation.models import ModelEndpoint, Release, ReleaseContext, ReleaseItem
from curation.queues import queue_for, waiting_label
from scoring import results as result_metrics
from scoring.methods import MethodSettings, run_method, templates_for, templates_hash
from scoring.methods.base import PROGRAM_METHODS
from scoring.models import Prediction, RunChunk, ScoringRun, ScoringTemplate
from scoring.permissions import can_run

logger = logging.getLogger(__name__)

Status = ScoringRun.Status
DEFAULT_CHUNK_SIZE = 8
# A running chunk whose heartbeat is older than this is taken to be lost with its worker (settings may override).
# Heartbeat and pause/cancel check interval of a chunk in progress (not per prediction: one query less each).
HEARTBEAT_SECONDS = 1.0
PROGRAM_TIMEOUT_S = 10.0
TOOL_OPTIONS = ("all", "data")
FEW_SHOTS = (0, 1, 3)
PREDICTION_FIELDS = (
    "position", "uid", "status", "prompt", "raw_output", "stages", "answer", "scale", "program", "program_result",
    "tool_trace", "metrics", "is_correct", "tokens_in", "tokens_out", "latency_s", "metrics_s", "attempts",
    "attempt_log", "error", "worker", "context",
)  # fmt: skip


def _require_runner(actor: AbstractBaseUser | None, run_project: Any, action: str) -> None:
    if actor is not None and not can_run(user=actor, project=run_project):
        raise NotPermitted(f"Only a manager or verifier of this project may {action}.")


def canonical_hash(value: Any) -> str:
    """sha256 of sorted-key compact JSON."""
    return hashlib.sha256(
        json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    ).hexdigest()


def project_templates(project: Any) -> dict[str, str]:
    """The latest saved template text of each stage of a project (stages never saved use the defaults)."""
    latest: dict[str, str] = {}
    for stage, text in ScoringTemplate.objects.filter(project=project).values_list("stage", "text"):
        latest.setdefault(stage, text)
    return latest


def scoring_template_save(*, project: Any, actor: AbstractBaseUser | None, stage: str, text: str) -> ScoringTemplate:
    """Save a new version of a stage's template (managers and verifiers); the same text twice is one version."""
    _require_runner(actor, project, "edit prompt templates")
    from scoring.methods.templates import DEFAULT_TEMPLATES, template_hash

    if stage not in DEFAULT_TEMPLATES:
        raise InvalidInput(f"Unknown template stage {stage!r}; expected one of {', '.join(DEFAULT_TEMPLATES)}.")
    if not text.strip():
        raise InvalidInput("A template cannot be empty.")
    digest = template_hash(text)
    template, created = ScoringTemplate.objects.get_or_create(
        project=project, stage=stage, sha256=digest, defaults={"text": text, "created_by": actor}
    )
    if not created:
        # Re-saving an older version makes it the latest again.
        ScoringTemplate.objects.filter(pk=template.pk).update(created_at=timezone.now())
    return template


def run_create(
    *,
    release: Release,
    actor: AbstractBaseUser | None,
    method: str,
    setting: str = "short",
    endpoint: ModelEndpoint | None = None,
    label: str = "",
    templates: dict[str, str] | None = None,
    generation_params: dict[str, Any] | None = None,
    few_shot: int = 0,
    tools: str = "all",
    max_turns: int = 6,
    json_schema: bool = True,
    use_cache: bool = True,
    limit: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    uploaded: dict[str, Any] | None = None,
    upload_name: str = "",
    upload_format: str = "",
) -> ScoringRun:
    """Create a queued run with its chunks (managers and verifiers; `actor=None` is an operator command)."""
    project = release.project
    _require_runner(actor, project, "score models")
    if method not in ScoringRun.Method.values:
        raise InvalidInput(f"Unknown method {method!r}; expected one of {', '.join(ScoringRun.Method.values)}.")
    if setting not in ScoringRun.Setting.values:
        raise InvalidInput("The context setting is short or long.")
    if (method == "upload") != (uploaded is not None):
        raise InvalidInput("Uploaded predictions go with the 'upload' method, and only with it.")
    if method != "upload":
        if endpoint is None:
            raise InvalidInput("Choose a model endpoint.")
        if endpoint.project_id not in (None, project.pk):
            raise InvalidInput("That endpoint belongs to another project.")
    if tools not in TOOL_OPTIONS:
        raise InvalidInput("Tools are 'all' or 'data'.")
    if few_shot not in FEW_SHOTS:
        raise InvalidInput("Tool examples are 0, 1 or 3 shots.")
    if not 1 <= max_turns <= 30:
        raise InvalidInput("The turn limit is between 1 and 30.")
    if limit is not None and limit < 1:
        raise InvalidInput("The limit is a positive number of items.")
    chunk_size = max(1, min(int(chunk_size), 500))
    used_templates = templates_for(method, {**project_templates(project), **(templates or {})})
    params = {**(endpoint.generation_params if endpoint else {}), **(generation_params or {})}
    from curation.endpoints.config import GENERATION_PARAM_NAMES

    unknown = set(params) - GENERATION_PARAM_NAMES
    if unknown:
        raise InvalidInput(f"Unknown generation parameters: {', '.join(sorted(unknown))}.")
    positions = list(
        ReleaseItem.objects.filter(release=release).order_by("position").values_list("position", flat=True)[:limit]
    )
    if not positions:
        raise InvalidInput("That release has no items.")
    options = {
        "few_shot": few_shot,
        "tools": tools,
        "max_turns": max_turns,
        "json_schema": json_schema,
        "use_cache": use_cache,
    }
    config = {
        "release": {"id": release.pk, "content_hash": release.content_hash},
        "endpoint": ({"id": endpoint.pk, "base_url": endpoint.base_url, "model": endpoint.model} if endpoint else None),
        "upload_sha256": canonical_hash(uploaded) if uploaded is not None else None,
        "method": method,
        "setting": setting,
        "template_hash": templates_hash(used_templates),
        "generation_params": params,
        "options": options,
        "limit": limit,
    }
    with transaction.atomic():
        run = ScoringRun.objects.create(
            project=project,
            release=release,
            endpoint=endpoint,
            label=label or (endpoint.model if endpoint else upload_name or "uploaded predictions"),
            method=method,
            setting=setting,
            templates=used_templates,
            template_hash=config["template_hash"],
            generation_params=params,
            options=options,
            config=config,
            config_hash=canonical_hash(config),
            uploaded_predictions=uploaded,
            upload_name=upload_name,
            upload_format=upload_format,
            item_limit=limit,
            items_total=len(positions),
            chunk_size=chunk_size,
            created_by=actor if actor is not None and actor.is_authenticated else None,
        )
        RunChunk.objects.bulk_create(
            RunChunk(
                run=run,
                index=index,
                first_position=positions[start],
                last_position=positions[min(start + chunk_size, len(positions)) - 1],
            )
            for index, start in enumerate(range(0, len(positions), chunk_size))
        )
    return run


def _transition(run: ScoringRun, sources: tuple[str, ...], target: str, **assignments: Any) -> bool:
    changed = ScoringRun.objects.filter(pk=run.pk, status__in=sources).update(status=target, **assignments)
    if changed:
        run.status = target
        for name, value in assignments.items():
            setattr(run, name, value)
    return bool(changed)


def _enqueue(run: ScoringRun, chunk_ids: list[int]) -> None:
    """Send one task per chunk once the transaction commits (the row is the record, the message only a nudge)."""
    if not chunk_ids:
        return
    RunChunk.objects.filter(pk__in=chunk_ids).update(enqueued_at=timezone.now())
    for chunk_id in chunk_ids:
        job_enqueue(task_name="scoring.run_chunk", args=[chunk_id], queue=run.queue or None)


def run_start(*, run: ScoringRun, actor: AbstractBaseUser | None, queue: str = "", dispatch: bool = True) -> ScoringRun:
    """Queued → running and every chunk sent to the workers (an upload run is scored right here: no model calls).
    `dispatch=False` sends nothing: the caller processes the chunks itself (the `score --inline` command).
    Tasks go to `queue`, else settings.TATCURATE_SCORING_QUEUE (curation/queues.py)."""
    _require_runner(actor, run.project, "start runs")
    with transaction.atomic():
        queue = queue or queue_for("scoring.run_chunk")
        if not _transition(run, (Status.QUEUED,), Status.RUNNING, started_at=timezone.now(), queue=queue):
            raise Conflict(f"Run {run.pk} is {run.status}, not queued.")
        if run.method != ScoringRun.Method.UPLOAD and dispatch:
            _enqueue(run, list(run.chunks.filter(status=RunChunk.Status.QUEUED).values_list("pk", flat=True)))
    if run.method == ScoringRun.Method.UPLOAD:
        for chunk_id in run.chunks.values_list("pk", flat=True):
            chunk_process(chunk_id=chunk_id, worker="web")
        run.refresh_from_db()
    return run


def run_pause(*, run: ScoringRun, actor: AbstractBaseUser | None) -> ScoringRun:
    """Running → paused: workers finish their in-flight requests and hand their chunks back."""
    _require_runner(actor, run.project, "pause runs")
    if not _transition(run, (Status.RUNNING, Status.QUEUED), Status.PAUSED):
        raise Conflict(f"Run {run.pk} is {run.status}; only a queued or running run can be paused.")
    return run


def run_resume(*, run: ScoringRun, actor: AbstractBaseUser | None) -> ScoringRun:
    """Paused → running: unfinished chunks are sent again; done predictions are kept."""
    _require_runner(actor, run.project, "resume runs")
    with transaction.atomic():
        assignments: dict[str, Any] = {} if run.started_at else {"started_at": timezone.now()}
        if not _transition(run, (Status.PAUSED,), Status.RUNNING, **assignments):
            raise Conflict(f"Run {run.pk} is {run.status}, not paused.")
        RunChunk.objects.filter(run=run).exclude(status=RunChunk.Status.DONE).update(
            status=RunChunk.Status.QUEUED, claim_token=""
        )
        _enqueue(run, list(run.chunks.filter(status=RunChunk.Status.QUEUED).values_list("pk", flat=True)))
    return run


def run_cancel(*, run: ScoringRun, actor: AbstractBaseUser | None) -> ScoringRun:
    """Any unfinished run → cancelled; predictions made so far stay readable."""
    _require_runner(actor, run.project, "cancel runs")
    if not _transition(
        run, (Status.QUEUED, Status.RUNNING, Status.PAUSED), Status.CANCELLED, finished_at=timezone.now()
    ):
        raise Conflict(f"Run {run.pk} is {run.status}; it cannot be cancelled.")
    return run


def run_retry_failed(*, run: ScoringRun, actor: AbstractBaseUser | None) -> int:
    """Delete the failed predictions of a finished run and run their chunks again; returns how many are retried."""
    _require_runner(actor, run.project, "retry runs")
    with transaction.atomic():
        failed = Prediction.objects.filter(run=run, status=Prediction.Status.FAILED)
        positions = list(failed.values_list("position", flat=True))
        if not positions:
            raise InvalidInput("This run has no failed predictions.")
        if not _transition(
            run, (Status.COMPLETED, Status.FAILED, Status.CANCELLED, Status.PAUSED), Status.RUNNING, finished_at=None
        ):
            raise Conflict(f"Run {run.pk} is {run.status}; wait until it stops.")
        failed.delete()
        touched = Q()
        for position in positions:
            touched |= Q(first_position__lte=position, last_position__gte=position)
        # deliveries=0: the reaper's count of lost deliveries starts again for the retried chunks.
        RunChunk.objects.filter(Q(run=run) & touched).update(
            status=RunChunk.Status.QUEUED, claim_token="", deliveries=0
        )
        RunChunk.objects.filter(run=run).exclude(status=RunChunk.Status.DONE).update(
            status=RunChunk.Status.QUEUED, claim_token=""
        )
        if run.method != ScoringRun.Method.UPLOAD:
            _enqueue(run, list(run.chunks.filter(status=RunChunk.Status.QUEUED).values_list("pk", flat=True)))
    if run.method == ScoringRun.Method.UPLOAD:
        for chunk_id in run.chunks.filter(status=RunChunk.Status.QUEUED).values_list("pk", flat=True):
            chunk_process(chunk_id=chunk_id, worker="web")
    return len(positions)


def runs_reap(*, stall_s: float | None = None) -> int:
    """Send again the chunks of running runs whose worker went silent (killed, lost); returns how many. Run by the
    beat reaper (curation.jobs_reap). A chunk delivered TATCURATE_JOB_MAX_ATTEMPTS times (its items keep killing
    the worker) is given up instead: its unanswered items become failed predictions, which "retry failed" redoes."""
    stall_s = settings.TATCURATE_SCORING_STALL_S if stall_s is None else stall_s
    stalled = RunChunk.objects.filter(
        run__status=Status.RUNNING, status=RunChunk.Status.RUNNING, heartbeat_at__lt=job_stall_cutoff(stall_s)
    )
    # A queued chunk long after its message was sent: the message was lost (a broker without redelivery).
    forgotten = RunChunk.objects.filter(
        run__status=Status.RUNNING, status=RunChunk.Status.QUEUED, enqueued_at__lt=job_stall_cutoff(3 * stall_s)
    )
    reaped = 0
    given_up: list[RunChunk] = []
    for rows, max_attempts in ((stalled, settings.TATCURATE_JOB_MAX_ATTEMPTS), (forgotten, None)):
        with transaction.atomic():
            requeued, failed = job_reap(
                stalled=rows.select_related("run"),
                waiting=RunChunk.Status.QUEUED,
                failed=RunChunk.Status.DONE,
                attempts_field="deliveries",
                max_attempts=max_attempts,
                describe=lambda chunk: f"chunk {chunk.index} of run {chunk.run_id}",
                error_field=None,
            )
            for chunk in requeued:
                _enqueue(chunk.run, [chunk.pk])
            for chunk in failed:  # in the same transaction as the chunk's "done": both happen, or neither
                _chunk_predictions_fail(chunk)
            reaped += len(requeued) + len(failed)
            given_up += failed
    for run_id in {chunk.run_id for chunk in given_up}:
        run_finish_if_done(run_id=run_id)
    return reaped


def _chunk_predictions_fail(chunk: RunChunk) -> None:
    """Record each unanswered item of a given-up chunk as a failed prediction."""
    run = chunk.run
    if (isolation := _program_isolation(run)) is not None:
        _isolation_record(run, isolation.isolation)  # the run page says so before the first item is answered
    done = set(Prediction.objects.filter(run=run).values_list("item_id", flat=True))
    message = f"Given up after {chunk.deliveries} deliveries: the worker ({chunk.worker or 'unknown'}) went silent."
    rows = ReleaseItem.objects.filter(
        release=run.release, position__gte=chunk.first_position, position__lte=chunk.last_position
    ).order_by("position")
    for row in rows:
        if row.pk not in done:
            _save_prediction(run, row, _failed_fields({**row.data, "position": row.position}, message), "")


# --- Processing ------------------------------------------------------------------------------------------------


def _claim(chunk_id: int, token: str, worker: str) -> bool:
    stale = job_stall_cutoff(settings.TATCURATE_SCORING_STALL_S)
    return job_claim(
        rows=RunChunk.objects.filter(pk=chunk_id, run__status=Status.RUNNING).filter(
            Q(status=RunChunk.Status.QUEUED) | Q(status=RunChunk.Status.RUNNING, heartbeat_at__lt=stale)
        ),
        token=token,
        worker=worker,
        running=RunChunk.Status.RUNNING,
        attempts_field="deliveries",
    )


def _heartbeat(chunk_id: int, token: str) -> bool:
    return job_heartbeat(rows=RunChunk.objects.filter(pk=chunk_id), token=token)


def _release(chunk_id: int, token: str) -> None:
    job_release(rows=RunChunk.objects.filter(pk=chunk_id), token=token, waiting=RunChunk.Status.QUEUED)


def _client(run: ScoringRun) -> ChatClient:
    if run.endpoint.is_local_default:
        from urllib.parse import urlsplit

        from curation.endpoints.local_model import ensure_running

        # The embedded demo model: start it beside this worker when nothing answers on its port yet.
        ensure_running(urlsplit(run.endpoint.base_url).port or 8089)
    cache = django_cache if run.options.get("use_cache", True) else None
    return ChatClient(run.endpoint.config(), cache=cache, **limiter_options())


def _settings_of(run: ScoringRun, position: int) -> MethodSettings:
    return MethodSettings(
        templates=run.templates,
        few_shot=int(run.options.get("few_shot", 0)),
        tools=run.options.get("tools", "all"),
        max_turns=int(run.options.get("max_turns", 6)),
        supports_tools=bool(run.endpoint.supports_tools) if run.endpoint else False,
        json_schema=bool(run.options.get("json_schema", True)),
        seed=int(run.generation_params.get("seed") or 0) + position,
    )


def _bertscorer() -> Any:
    from scoring.metrics.bertscore import BertScoreUnavailableError, default_scorer

    try:
        return default_scorer()
    except (BertScoreUnavailableError, OSError, ImportError) as error:
        logger.warning("BERTScore unavailable: %s", error)
        return None


def _run_program(code: str) -> Any:
    from scoring.sandbox import run_program

    # Model-written code never runs in the worker: a fresh sandboxed interpreter per program, or none at all.
    return run_program(
        code,
        entry="ans",
        timeout_s=PROGRAM_TIMEOUT_S,
        allow_unisolated=settings.TATCURATE_UNSAFE_RUN_PROGRAMS_UNISOLATED,
    )


def _program_isolation(run: ScoringRun) -> Any:
    """What `run`'s model-written programs get on this worker (an IsolationStatus), or None if it runs none."""
    from scoring.sandbox import isolation_status

    if run.method not in PROGRAM_METHODS:
        return None
    return isolation_status(allow_unisolated=settings.TATCURATE_UNSAFE_RUN_PROGRAMS_UNISOLATED)


# Worst first: once any worker refused or ran unisolated, the run says so.
_ISOLATION_RANK = {"refused": 3, "degraded": 2, "bwrap": 1, "": 0}


def _isolation_record(run: ScoringRun, isolation: str) -> None:
    """Keep the weakest isolation any of the run's workers offered on the run (compare-and-set, never upgrades)."""
    weaker = [name for name, rank in _ISOLATION_RANK.items() if rank < _ISOLATION_RANK.get(isolation, 0)]
    if weaker and ScoringRun.objects.filter(pk=run.pk, isolation__in=weaker).update(isolation=isolation):
        run.isolation = isolation


def _uploaded_output(run: ScoringRun, item: dict[str, Any]) -> tuple[dict[str, Any], list[str] | None]:
    entry = (run.uploaded_predictions or {}).get(item["uid"])
    if entry is None:
        return {"answer": [], "scale": "", "error": "no prediction for this uid in the uploaded file"}, None
    return {
        "answer": [str(a) for a in entry.get("answer") or []],
        "scale": str(entry.get("scale") or ""),
        "raw_output": str(entry.get("raw_output") or ""),
        "program": " ".join(entry["program_tokens"]) if entry.get("program_tokens") else "",
    }, entry.get("program_tokens")


def _failed_fields(item: dict[str, Any], message: str) -> dict[str, Any]:
    """A failed prediction of `item`, scored like any other (no answer)."""
    fields = {"uid": item["uid"], "status": Prediction.Status.FAILED, "error": message, "answer": [], "scale": ""}
    metrics = result_metrics.item_metrics(
        item,
        answer=[],
        scale="",
        tool_trace=[],
        program_tokens=None,
        bertscorer=_bertscorer() if not result_metrics.is_short_form(item) else None,
    )
    return {**fields, "metrics": metrics, "is_correct": bool(metrics.get("is_correct"))}


def predict_item(
    run: ScoringRun, item: dict[str, Any], context: dict[str, Any] | None, chat: Callable[..., Any] | None
) -> dict[str, Any]:
    """Answer and score one item (no database access, so threads can run it); endpoint failures → status failed."""
    fields: dict[str, Any] = {"uid": item["uid"], "status": Prediction.Status.SCORED, "error": ""}
    program_tokens = None
    trace: list[dict[str, Any]] = []
    if run.method == ScoringRun.Method.UPLOAD:
        uploaded, program_tokens = _uploaded_output(run, item)
        fields.update(uploaded)
    elif (isolation := _program_isolation(run)) is not None and isolation.isolation == "refused":
        # Fail closed, before asking the model: the item is retried once the worker can isolate programs.
        return _failed_fields(item, f"model-written code was not run: no isolation on this worker ({isolation.reason})")
    else:
        assert chat is not None
        try:
            output = run_method(
                run.method,
                question=item.get("question", ""),
                context=context,
                chat=chat,
                run_program=_run_program,
                settings=_settings_of(run, item.get("position", 0)),
            )
        except EndpointError as error:
            attempts = [attempt.as_dict() for attempt in error.attempts]
            fields.update(
                status=Prediction.Status.FAILED,
                error=f"{type(error).__name__}: {error.message}",
                attempts=len(attempts),
                attempt_log=attempts,
                answer=[],
                scale="",
            )
        except Exception as error:  # a bug on one item must not stall the run; it is shown on the item
            logger.exception("prediction of %s failed", item.get("uid"))
            fields.update(
                status=Prediction.Status.FAILED, error=f"{type(error).__name__}: {error}", answer=[], scale=""
            )
        else:
            trace = output.tool_trace
            fields.update(
                prompt=output.messages,
                raw_output=output.raw_output,
                stages={
                    **output.stages,
                    "rule": output.rule,
                    "is_parsed": output.is_parsed,
                    "requests": output.requests,
                },
                answer=output.answer,
                scale=output.scale,
                program=output.program,
                program_result=output.program_result,
                tool_trace=trace,
                tokens_in=output.tokens_in,
                tokens_out=output.tokens_out,
                latency_s=round(output.latency_s, 4),
                attempts=len(output.attempts),
                attempt_log=output.attempts[-20:],
                isolation=output.isolation,
            )
    started = time.perf_counter()
    metrics = result_metrics.item_metrics(
        item,
        answer=fields.get("answer") or [],
        scale=fields.get("scale") or "",
        tool_trace=trace,
        program_tokens=program_tokens,
        bertscorer=_bertscorer() if not result_metrics.is_short_form(item) else None,
    )
    fields["metrics"] = metrics
    fields["is_correct"] = bool(metrics.get("is_correct"))
    fields["metrics_s"] = round(time.perf_counter() - started, 5)
    return fields


def _save_prediction(run: ScoringRun, item_row: ReleaseItem, fields: dict[str, Any], worker: str) -> None:
    fields = {**fields, "position": item_row.position, "worker": worker}
    isolation = fields.pop("isolation", "")
    values = {name: fields[name] for name in PREDICTION_FIELDS if name in fields}
    # Upsert on (run, item): a second writer (a reaped chunk's late worker) replaces rather than duplicates.
    Prediction.objects.bulk_create(
        [Prediction(run=run, item=item_row, **values)],
        update_conflicts=True,
        unique_fields=["run", "item"],
        update_fields=[name for name in values if name != "position"] or ["status"],
    )
    if isolation:
        _isolation_record(run, isolation)


def chunk_process(*, chunk_id: int, worker: str = "") -> str:
    """Process one chunk: claim it, answer each item not yet predicted, commit each prediction on its own, then mark
    the chunk done and, for the last chunk, finish the run. Called by the task; returns what happened."""
    worker = worker or socket.gethostname()
    token = job_token()
    if not _claim(chunk_id, token, worker):
        return "skipped"
    chunk = RunChunk.objects.select_related("run__endpoint", "run__project", "run__release").get(pk=chunk_id)
    run = chunk.run
    if (isolation := _program_isolation(run)) is not None:
        _isolation_record(run, isolation.isolation)  # the run page says so before the first item is answered
    done = set(Prediction.objects.filter(run=run).values_list("item_id", flat=True))
    rows = [
        row
        for row in ReleaseItem.objects.filter(
            release=run.release, position__gte=chunk.first_position, position__lte=chunk.last_position
        ).order_by("position")
        if row.pk not in done
    ]

    def context_of(row: ReleaseItem) -> tuple[str, int | None]:
        """The setting's context of an item: short where the release has one, else (always for "long") the paper."""
        if run.setting == "short" and row.short_context_id:
            return "short", row.short_context_id
        return "long", row.long_context_id

    context_ids = {context_of(row)[1] for row in rows}
    contexts = dict(ReleaseContext.objects.filter(pk__in=[c for c in context_ids if c]).values_list("id", "data"))
    outcome = "done"
    client = _client(run) if run.method != ScoringRun.Method.UPLOAD else None
    # The run's own parameters (over the endpoint's defaults) go with every request of the run.
    chat = functools.partial(client.chat, **run.generation_params) if client is not None else None
    # Twice the endpoint's limit: while some threads compute metrics or run programs, others hold every request
    # slot; the limiter (shared through Redis) still bounds the requests in flight to the limit.
    width = max(1, min(2 * (run.endpoint.concurrency_limit if run.endpoint else 1), len(rows) or 1))
    try:
        with ThreadPoolExecutor(max_workers=width, thread_name_prefix=f"run{run.pk}") as pool:
            pending: dict[Future[dict[str, Any]], tuple[ReleaseItem, str]] = {}
            queue = list(rows)
            last_beat = time.monotonic()
            stop = False
            while queue or pending:
                while queue and len(pending) < width and not stop:
                    row = queue.pop(0)
                    setting, context_id = context_of(row)
                    item = {**row.data, "position": row.position}
                    pending[pool.submit(predict_item, run, item, contexts.get(context_id), chat)] = (row, setting)
                if not pending:
                    break
                finished, _ = wait(list(pending), timeout=HEARTBEAT_SECONDS, return_when=FIRST_COMPLETED)
                for future in finished:
                    row, setting = pending.pop(future)
                    given = {"context": setting} if client is not None else {}
                    _save_prediction(run, row, {**future.result(), **given}, worker)
                if time.monotonic() - last_beat >= HEARTBEAT_SECONDS:
                    last_beat = time.monotonic()
                    if not _heartbeat(chunk_id, token):
                        outcome, stop = "claim lost", True
                    status = ScoringRun.objects.filter(pk=run.pk).values_list("status", flat=True).first()
                    if status != Status.RUNNING and not stop:
                        outcome, stop = f"run {status}", True
                if stop:
                    queue.clear()
                    for future in list(pending):
                        if future.cancel():
                            pending.pop(future)
    except BaseException:
        # Soft time limit or shutdown: hand the chunk back so another delivery continues where this one stopped.
        _release(chunk_id, token)
        raise
    finally:
        if client is not None:
            client.close()
    if outcome != "done":
        if outcome.startswith("run"):
            _release(chunk_id, token)
        return outcome
    RunChunk.objects.filter(pk=chunk_id, claim_token=token).update(
        status=RunChunk.Status.DONE, finished_at=timezone.now(), heartbeat_at=timezone.now()
    )
    run_finish_if_done(run_id=run.pk)
    return outcome


def run_work(*, chunk_id: int, worker: str = "", budget_s: float = 600.0) -> list[str]:
    """Process a chunk, then keep taking the run's other queued chunks while `budget_s` lasts. Called by the task.

    The rows, not the messages, are the record of work: a worker that has finished its chunk claims the next one
    itself, so a lost or late message never leaves a run unfinished, and the messages of chunks taken this way
    find them done and exit quietly."""
    started = time.monotonic()
    outcomes = [chunk_process(chunk_id=chunk_id, worker=worker)]
    run_id = RunChunk.objects.filter(pk=chunk_id).values_list("run_id", flat=True).first()
    while outcomes[-1] in ("done", "skipped") and time.monotonic() - started < budget_s:
        following = (
            RunChunk.objects.filter(run_id=run_id, run__status=Status.RUNNING, status=RunChunk.Status.QUEUED)
            .order_by("index")
            .values_list("pk", flat=True)
            .first()
        )
        if following is None:
            break
        outcomes.append(chunk_process(chunk_id=following, worker=worker))
    return outcomes


def run_finish_if_done(*, run_id: int) -> bool:
    """Running → completed once every chunk is done (exactly one caller wins), then compute the results."""
    if RunChunk.objects.filter(run_id=run_id).exclude(status=RunChunk.Status.DONE).exists():
        return False
    run = ScoringRun.objects.get(pk=run_id)
    if not _transition(run, (Status.RUNNING,), Status.COMPLETED, finished_at=timezone.now()):
        return False
    run_results_compute(run=run)
    return True


# --- Results ---------------------------------------------------------------------------------------------------


def prediction_records(run: ScoringRun) -> list[dict[str, Any]]:
    """One flat record per prediction (metrics + item attributes) for aggregation and export."""
    records = []
    rows = (
        Prediction.objects.filter(run=run)
        .order_by("position")
        .values_list(
            "uid", "status", "metrics", "is_correct", "tokens_out", "item__data", "error", "answer", "scale", "context"
        )
    )
    for uid, status, metrics, is_correct, tokens_out, data, error, answer, scale, context in rows.iterator(
        chunk_size=1000
    ):
        records.append(
            {
                **(metrics or {}),
                "uid": uid,
                "status": status,
                "is_correct": is_correct,
                "tokens_out": tokens_out,
                "paper": data.get("paper"),
                "reasoning_type": data.get("reasoning_type_name") or data.get("reasoning_type"),
                "answer_form": data.get("answer_form") or ("short" if metrics.get("short_form") else "free"),
                "answer_source": data.get("answer_source"),
                "error": error,
                "answer": answer,
                "scale": scale,
                "context": context,
            }
        )
    return records


def run_results_compute(*, run: ScoringRun) -> dict[str, Any]:
    """Aggregate the predictions into the run's results (bootstrap CIs, breakdowns, tool and token figures)."""
    records = prediction_records(run)
    summary = result_metrics.run_summary(records)
    summary["setting"] = run.setting
    # A short-setting run answers on the whole paper where the release has no short context (TAT-QA, FinQA):
    # said with the figures, so nobody reads them as short-context results.
    summary["long_context_fallbacks"] = (
        sum(1 for r in records if r["context"] == "long") if run.setting == "short" else 0
    )
    summary["method"] = run.method
    summary["metrics_s"] = sum(Prediction.objects.filter(run=run).values_list("metrics_s", flat=True))
    scorer_info = None
    if summary.get("free_form_count"):
        scorer = _bertscorer()
        scorer_info = scorer.info() if scorer is not None else None
    summary["bertscore_info"] = scorer_info
    ScoringRun.objects.filter(pk=run.pk).update(results=summary, results_computed_at=timezone.now())
    run.results = summary
    return summary


def run_progress(run: ScoringRun) -> dict[str, Any]:
    """Done, failed, remaining, rate (items/s over the run so far) and an ETA in seconds."""
    counts = Prediction.objects.filter(run=run).aggregate(
        done=Count("id"), failed=Count("id", filter=Q(status=Prediction.Status.FAILED))
    )
    done, total = counts["done"], run.items_total
    elapsed = (timezone.now() - run.started_at).total_seconds() if run.started_at else 0.0
    if run.finished_at and run.started_at:
        elapsed = (run.finished_at - run.started_at).total_seconds()
    rate = done / elapsed if elapsed > 0 and done else 0.0
    remaining = max(total - done, 0)
    return {
        "done": done,
        "failed": counts["failed"],
        "total": total,
        "percent": round(100 * done / total, 1) if total else 0.0,
        "rate_per_s": round(rate, 3),
        "eta_s": round(remaining / rate) if rate and run.status == Status.RUNNING else None,
        "status": run.status,
        "queued_behind": (queued_behind := run_queued_behind(run, done=done)),
        "waiting": waiting_label(queued_behind),
    }


def run_queued_behind(run: ScoringRun, *, done: int | None = None) -> int | None:
    """How many runs started earlier on this run's queue still have chunks to do, while no chunk of this run has
    begun (None once one has, or when the run is not running)."""
    if run.status != Status.RUNNING or run.method == ScoringRun.Method.UPLOAD or run.started_at is None:
        return None
    if done is None:
        done = Prediction.objects.filter(run=run).count()
    if done or run.chunks.exclude(status=RunChunk.Status.QUEUED).exists():
        return None
    earlier = Q(started_at__lt=run.started_at) | Q(started_at=run.started_at, pk__lt=run.pk)
    unfinished = (RunChunk.Status.QUEUED, RunChunk.Status.RUNNING)
    return (
        ScoringRun.objects.filter(earlier, queue=run.queue, status=Status.RUNNING, chunks__status__in=unfinished)
        .distinct()
        .count()
    )

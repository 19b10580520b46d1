"""Chunk processing on the workers.

Invariants: one Prediction per (run, item), written by an upsert the moment it is ready, so a killed worker loses only
its in-flight requests; a chunk is processed by whoever holds its claim token (a compare-and-set on the chunk row),
so a redelivered or duplicated task exits quietly."""

from __future__ import annotations

import functools
import logging
import socket
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone

from curation.endpoints.client import ChatClient
from curation.endpoints.django_client import client_for
from curation.endpoints.errors import EndpointError
from curation.endpoints.models import ModelEndpoint
from curation.jobs import JobKind, job_forgotten_seconds, job_heartbeat_seconds, job_stall_cutoff
from curation.releases.models import ReleaseContext, ReleaseItem
from curation.transient import TransientOutage, is_transient, transient_call
from scoring.methods import MethodSettings, run_method
from scoring.methods.base import MIN_TURNS, PROGRAM_METHODS
from scoring.metrics.judge import judge_answer
from scoring.runs import results as result_metrics
from scoring.runs.models import Prediction, RunChunk, ScoringRun
from scoring.runs.progress import bertscorer_load
from scoring.runs.states import chunks_enqueue, run_finish_if_done
from scoring.sandbox import isolation_status, run_program

logger = logging.getLogger(__name__)

Status = ScoringRun.Status
PROGRAM_TIMEOUT_S = 10.0
# The columns of a Prediction a chunk writes (the upsert sets those given): all but its keys and creation time.
PREDICTION_FIELDS = {field.name for field in Prediction._meta.concrete_fields} - {"id", "run", "item", "created_at"}


def chunk_predictions_fail(chunk: RunChunk) -> None:
    """Record each unanswered item of a given-up chunk as a failed prediction."""
    message = f"Given up after {chunk.deliveries} deliveries: the worker ({chunk.worker or 'unknown'}) went silent."
    for row in _unanswered(chunk):
        item = {**row.data, "position": row.position}
        _save_prediction(chunk.run, row, score_item(chunk.run, item, _failure(item, message), [], None), "")


def _unanswered(chunk: RunChunk) -> list[ReleaseItem]:
    """The items of a chunk without a prediction, in the release's order; first the run records what isolation its
    programs get on this worker, so the run page says so before the first item is answered."""
    run = chunk.run
    if (isolation := _program_isolation(run)) is not None:
        _isolation_record(run, isolation.isolation)
    rows = ReleaseItem.objects.filter(
        release=run.release, position__gte=chunk.first_position, position__lte=chunk.last_position
    ).order_by("position")
    # The chunk's own items only (by the unique (run, item) index): the whole run's predictions grow with the run.
    done = set(Prediction.objects.filter(run=run, item__in=rows).values_list("item_id", flat=True))
    return [row for row in rows if row.pk not in done]


class ScoringChunks(JobKind):
    """Scoring chunks: a worker claims a queued chunk of a running run and answers its items (`run_work`). The
    reaper sends again a chunk whose worker went silent, or one still queued long after its message was sent (the
    message was lost: a broker without redelivery); a chunk delivered TATCURATE_JOB_MAX_ATTEMPTS times (its items
    keep killing the worker) is given up instead: its unanswered items become failed predictions, which "retry
    failed" redoes."""

    name = "scoring chunks"
    model = RunChunk
    state_field = "status"
    waiting = RunChunk.Status.QUEUED
    running = RunChunk.Status.RUNNING
    failed = RunChunk.Status.DONE
    attempts_field = "deliveries"
    error_field = None
    run_finish = staticmethod(run_finish_if_done)

    def describe(self, chunk: RunChunk) -> str:
        return f"chunk {chunk.index} of run {chunk.run_id}"

    def claimable(self) -> Any:
        # The run's status by `run_id__in`, never a join: a joined filter makes Django write `WHERE id IN (SELECT …
        # FROM runchunk JOIN run …)`, whose inner read of the chunk PostgreSQL does not check again after waiting for
        # a rival claim's row lock, so two workers took the same chunk. The chunk's own columns stay in the WHERE.
        return RunChunk.objects.filter(run_id__in=ScoringRun.objects.filter(status=Status.RUNNING).values("pk"))

    def stalled(self, stall_s: float | None = None) -> Any:
        return super().stalled(stall_s).filter(run__status=Status.RUNNING).select_related("run")

    def held_by(self, worker: str) -> Any:
        return super().held_by(worker).filter(run__status=Status.RUNNING).select_related("run")

    def send_again(self, rows: list[RunChunk]) -> None:
        for chunk in rows:
            chunks_enqueue(chunk.run, [chunk.pk])

    def given_up(self, rows: list[RunChunk]) -> None:
        for chunk in rows:  # in the same transaction as the chunk's "done": both happen, or neither
            chunk_predictions_fail(chunk)

    def forgotten_resend(self, stall_s: float | None) -> int:
        forgotten = RunChunk.objects.filter(
            run__status=Status.RUNNING,
            status=RunChunk.Status.QUEUED,
            enqueued_at__lt=job_stall_cutoff(job_forgotten_seconds() if stall_s is None else 3 * stall_s),
        )
        resent, _ = self.requeue(forgotten.select_related("run"), max_attempts=None, why="its message was lost")
        return len(resent)


SCORING_CHUNKS = ScoringChunks()


def endpoint_client(endpoint: ModelEndpoint, *, use_cache: bool = True) -> ChatClient:
    """The process's shared client of `endpoint` (its kept-alive connections serve chunk after chunk; the operator's
    outbound policy): never closed here. The embedded demo model is started beside this worker when nothing
    answers on its port yet."""
    if endpoint.is_local_default:
        from curation.endpoints.local_model import ensure_running

        ensure_running(urlsplit(endpoint.base_url).port or 8089)
    return client_for(endpoint, use_cache=use_cache)


def _client(run: ScoringRun) -> ChatClient:
    return endpoint_client(run.endpoint, use_cache=run.options.get("use_cache", True))


def _judge_chat(run: ScoringRun) -> Callable[..., Any] | None:
    """The judge endpoint's chat, deterministic (temperature 0), when the run has a judge."""
    if not run.options.get("judge"):
        return None
    endpoint = ModelEndpoint.objects.get(pk=run.options["judge"]["endpoint"])
    return functools.partial(client_for(endpoint).chat, temperature=0)


def _run_program(code: str) -> Any:
    # Model-written code never runs in the worker: a fresh sandboxed interpreter per program, or none at all.
    return run_program(
        code,
        entry="ans",
        timeout_s=PROGRAM_TIMEOUT_S,
        allow_unisolated=settings.TATCURATE_UNSAFE_RUN_PROGRAMS_UNISOLATED,
    )


def _program_isolation(run: ScoringRun) -> Any:
    """What `run`'s model-written programs get on this worker (an IsolationStatus), or None if it runs none."""
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
        "tool_trace": list(entry.get("tool_trace") or []),
    }, entry.get("program_tokens")


def _failure(item: dict[str, Any], message: str) -> dict[str, Any]:
    """The fields of a failed prediction of `item` (no answer), before it is scored like any other."""
    return {"uid": item["uid"], "status": Prediction.Status.FAILED, "error": message, "answer": [], "scale": ""}


Answered = tuple[dict[str, Any], list[dict[str, Any]], list[str] | None]  # fields, tool trace, program tokens


def answer_item(
    run: ScoringRun,
    item: dict[str, Any],
    context: dict[str, Any] | None,
    chat: Callable[..., Any] | None,
    judge: Callable[..., Any] | None = None,
) -> Answered:
    """Ask for one item's answer (no database access, so threads can run it); endpoint failures → status failed.
    With a judge, a free-form item's answer is graded too (`stages["judge"]`). `score_item` scores what it
    returns."""
    fields: dict[str, Any] = {"uid": item["uid"], "status": Prediction.Status.SCORED, "error": ""}
    program_tokens = None
    trace: list[dict[str, Any]] = []
    if run.method == ScoringRun.Method.UPLOAD:
        uploaded, program_tokens = _uploaded_output(run, item)
        fields.update(uploaded)
        trace = fields.get("tool_trace") or []
    elif (isolation := _program_isolation(run)) is not None and isolation.isolation == "refused":
        # Fail closed, before asking the model: the item is retried once the worker can isolate programs.
        message = f"model-written code was not run: no isolation on this worker ({isolation.reason})"
        return _failure(item, message), [], None
    else:
        assert chat is not None
        try:
            output = run_method(
                run.method,
                question=item.get("question", ""),
                context=context,
                chat=chat,
                run_program=_run_program,
                settings=MethodSettings(
                    templates=run.templates,
                    few_shot=int(run.options.get("few_shot", 0)),
                    tools=run.options.get("tools", "all"),
                    max_turns=int(run.options.get("max_turns", MIN_TURNS)),
                    supports_tools=bool(run.endpoint.supports_tools) if run.endpoint else False,
                    json_schema=bool(run.options.get("json_schema", True)),
                    seed=int(run.generation_params.get("seed") or 0) + item.get("position", 0),
                    extraction=run.options.get("extraction", "default"),
                ),
            )
        except EndpointError as error:
            attempts = [attempt.as_dict() for attempt in error.attempts]
            failure = _failure(item, f"{type(error).__name__}: {error.message}")
            fields.update(failure, attempts=len(attempts), attempt_log=attempts)
        except Exception as error:  # a bug on one item must not stall the run; it is shown on the item
            if is_transient(error):  # an outage is not the item's failure: the chunk goes back, the item untried
                raise TransientOutage(f"{type(error).__name__}: {error}") from error
            logger.exception("prediction of %s failed", item.get("uid"))
            fields.update(_failure(item, f"{type(error).__name__}: {error}"))
        else:
            trace = output.tool_trace
            copied = "raw_output answer scale program program_result tool_trace tokens_in tokens_out isolation".split()
            recorded = {name: getattr(output, name) for name in ("rule", "is_parsed", "requests")}
            fields.update(
                {name: getattr(output, name) for name in copied},
                prompt=output.messages,
                stages={**output.stages, **recorded},
                latency_s=round(output.latency_s, 4),
                attempts=len(output.attempts),
                attempt_log=output.attempts[-20:],
            )
    if judge is not None and fields["status"] == Prediction.Status.SCORED and not result_metrics.is_short_form(item):
        stages = fields.setdefault("stages", {})
        stages["judge"] = judge_answer(
            judge,
            run.options["judge"]["rubric"],
            question=item.get("question", ""),
            gold=item.get("answer") or [],
            answer=fields.get("answer") or [],
            model=run.options["judge"]["model"],
        )
    return fields, trace, program_tokens


def score_item(
    run: ScoringRun,
    item: dict[str, Any],
    fields: dict[str, Any],
    trace: list[dict[str, Any]],
    program_tokens: list[str] | None,
    *,
    context: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The metrics of an answered item (no database access), added to its fields; `context` (the item's frozen
    context) lets tool-call scoring read a table argument as the table it names."""
    started = time.perf_counter()
    free_form = not result_metrics.is_short_form(item)  # the run's BERTScore model is loaded for these only
    metrics = result_metrics.item_metrics(
        item,
        answer=fields.get("answer") or [],
        scale=fields.get("scale") or "",
        tool_trace=trace,
        program_tokens=program_tokens,
        context=context,
        bertscorer=bertscorer_load(run.options.get("bertscore", "minilm")) if free_form else None,
        scale_mode=run.options.get("scale_mode", "predicted"),
    )
    verdict = (fields.get("stages") or {}).get("judge") or {}
    if verdict.get("score") is not None:
        metrics["judge"] = verdict["score"]  # beside BERTScore; `is_correct` stays the official metrics' verdict
    return {
        **fields,
        "metrics": metrics,
        "is_correct": bool(metrics.get("is_correct")),
        "metrics_s": round(time.perf_counter() - started, 5),
    }


def _save_prediction(run: ScoringRun, item_row: ReleaseItem, fields: dict[str, Any], worker: str) -> None:
    fields = {**fields, "position": item_row.position, "worker": worker}
    isolation = fields.pop("isolation", "")
    values = {name: value for name, value in fields.items() if name in PREDICTION_FIELDS}
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
    token = SCORING_CHUNKS.take(chunk_id, worker=worker)
    if token is None:
        return "skipped"
    chunk = RunChunk.objects.select_related("run__endpoint", "run__project", "run__release").get(pk=chunk_id)
    run = chunk.run
    rows = _unanswered(chunk)

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
    judge = _judge_chat(run)
    # Twice the endpoint's limit: while some threads run programs or wait for their answer to be read, others hold
    # every request slot; the limiter (shared through Redis) still bounds the requests in flight to the limit.
    width = max(1, min(2 * (run.endpoint.concurrency_limit if run.endpoint else 1), len(rows) or 1))
    try:
        with (
            ThreadPoolExecutor(max_workers=width, thread_name_prefix=f"run{run.pk}") as pool,
            # Metrics in a thread of their own: an answered item frees its request thread at once, so neither
            # scoring nor loading BERTScore's weights (the first free-form item) holds a request back.
            ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"run{run.pk}-metrics") as scorer,
        ):
            asking: dict[Future[Answered], tuple[ReleaseItem, str, dict[str, Any], Any]] = {}
            scoring: dict[Future[dict[str, Any]], tuple[ReleaseItem, str]] = {}
            queue = list(rows)
            last_beat = time.monotonic()
            # Heartbeat and pause/cancel check of the chunk (not per prediction: one query less each); the beats
            # go on while the threads wait on slow model calls.
            beat_s = job_heartbeat_seconds()
            stop = False
            while queue or asking or scoring:
                while queue and len(asking) < width and not stop:
                    row = queue.pop(0)
                    setting, context_id = context_of(row)
                    item, context = {**row.data, "position": row.position}, contexts.get(context_id)
                    asking[pool.submit(answer_item, run, item, context, chat, judge)] = (row, setting, item, context)
                finished, _ = wait([*asking, *scoring], timeout=beat_s, return_when=FIRST_COMPLETED)
                for future in finished:
                    if future in asking:
                        row, setting, item, context = asking.pop(future)
                        try:
                            answered = future.result()
                        except TransientOutage as outage:  # the item stays unanswered; the others finish and save
                            logger.warning("chunk %s handed back: %s", chunk_id, outage)
                            outcome, stop = f"outage: {outage}", True
                            continue
                        scoring[scorer.submit(score_item, run, item, *answered, context=context)] = (row, setting)
                        continue
                    row, setting = scoring.pop(future)
                    given = {"context": setting} if client is not None else {}
                    transient_call(_save_prediction, run, row, {**future.result(), **given}, worker)
                if time.monotonic() - last_beat >= beat_s:
                    last_beat = time.monotonic()
                    if not transient_call(SCORING_CHUNKS.beat, chunk_id, token):
                        outcome, stop = "claim lost", True
                    status = transient_call(ScoringRun.objects.filter(pk=run.pk).values_list("status", flat=True).first)
                    if status != Status.RUNNING and not stop:
                        outcome, stop = f"run {status}", True
                if stop:
                    queue.clear()
                    for future in list(asking):
                        if future.cancel():
                            asking.pop(future)
    except BaseException as error:
        # Soft time limit, shutdown or an outage: hand the chunk back so another delivery continues where this one
        # stopped (an outage's release waits for the database to come back).
        if is_transient(error):
            transient_call(SCORING_CHUNKS.release, chunk_id, token, is_outage=True)
        else:
            SCORING_CHUNKS.release(chunk_id, token)
        raise
    if outcome != "done":
        if outcome.startswith(("run", "outage")):
            transient_call(SCORING_CHUNKS.release, chunk_id, token, is_outage=outcome.startswith("outage"))
        return outcome
    transient_call(
        RunChunk.objects.filter(pk=chunk_id, claim_token=token).update,
        status=RunChunk.Status.DONE,
        finished_at=timezone.now(),
        heartbeat_at=timezone.now(),
    )
    transient_call(run_finish_if_done, run_id=run.pk)
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

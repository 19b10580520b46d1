"""What a person does to a run: start, pause, resume, cancel, retry the failed predictions (each a compare-and-set
of the run's status, checked against who may run)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from curation.errors import Conflict, InvalidInput
from curation.queues import queue_for
from scoring.runs.chunks import chunk_process
from scoring.runs.models import Prediction, RunChunk, ScoringRun
from scoring.runs.permissions import runner_require
from scoring.runs.states import chunks_enqueue, run_transition

Status = ScoringRun.Status


def run_start(*, run: ScoringRun, actor: AbstractBaseUser | None, queue: str = "", dispatch: bool = True) -> ScoringRun:
    """Queued → running and every chunk sent to the workers (an upload run is scored right here: no model calls).
    `dispatch=False` sends nothing: the caller processes the chunks itself (the `score --inline` command).
    Tasks go to `queue`, else settings.TATCURATE_SCORING_QUEUE (curation/queues.py)."""
    runner_require(actor, run.project, "start runs")
    with transaction.atomic():
        queue = queue or queue_for("scoring.run_chunk")
        if not run_transition(run, (Status.QUEUED,), Status.RUNNING, started_at=timezone.now(), queue=queue):
            raise Conflict(f"Run {run.pk} is {run.status}, not queued.")
        if run.method != ScoringRun.Method.UPLOAD and dispatch:
            chunks_enqueue(run, list(run.chunks.filter(status=RunChunk.Status.QUEUED).values_list("pk", flat=True)))
    if run.method == ScoringRun.Method.UPLOAD:
        for chunk_id in run.chunks.values_list("pk", flat=True):
            chunk_process(chunk_id=chunk_id, worker="web")
        run.refresh_from_db()
    return run


def run_pause(*, run: ScoringRun, actor: AbstractBaseUser | None) -> ScoringRun:
    """Running → paused: workers finish their in-flight requests and hand their chunks back."""
    runner_require(actor, run.project, "pause runs")
    if not run_transition(run, (Status.RUNNING, Status.QUEUED), Status.PAUSED):
        raise Conflict(f"Run {run.pk} is {run.status}; only a queued or running run can be paused.")
    return run


def run_resume(*, run: ScoringRun, actor: AbstractBaseUser | None) -> ScoringRun:
    """Paused → running: unfinished chunks are sent again; done predictions are kept."""
    runner_require(actor, run.project, "resume runs")
    with transaction.atomic():
        assignments: dict[str, Any] = {} if run.started_at else {"started_at": timezone.now()}
        if not run_transition(run, (Status.PAUSED,), Status.RUNNING, **assignments):
            raise Conflict(f"Run {run.pk} is {run.status}, not paused.")
        RunChunk.objects.filter(run=run).exclude(status=RunChunk.Status.DONE).update(
            status=RunChunk.Status.QUEUED, claim_token=""
        )
        chunks_enqueue(run, list(run.chunks.filter(status=RunChunk.Status.QUEUED).values_list("pk", flat=True)))
    return run


def run_cancel(*, run: ScoringRun, actor: AbstractBaseUser | None) -> ScoringRun:
    """Any unfinished run → cancelled; predictions made so far stay readable."""
    runner_require(actor, run.project, "cancel runs")
    if not run_transition(
        run, (Status.QUEUED, Status.RUNNING, Status.PAUSED), Status.CANCELLED, finished_at=timezone.now()
    ):
        raise Conflict(f"Run {run.pk} is {run.status}; it cannot be cancelled.")
    return run


def run_retry_failed(*, run: ScoringRun, actor: AbstractBaseUser | None) -> int:
    """Delete the failed predictions of a finished run and run their chunks again; returns how many are retried."""
    runner_require(actor, run.project, "retry runs")
    with transaction.atomic():
        failed = Prediction.objects.filter(run=run, status=Prediction.Status.FAILED)
        retried = failed.count()
        if not retried:
            raise InvalidInput("This run has no failed predictions.")
        if not run_transition(
            run,
            (Status.COMPLETED, Status.FAILED, Status.CANCELLED, Status.PAUSED),
            Status.RUNNING,
            finished_at=None,
            error="",
        ):
            raise Conflict(f"Run {run.pk} is {run.status}; wait until it stops.")
        # The chunks that hold a failed prediction, asked in one subquery (one condition per position grew past
        # SQLite's expression depth at a thousand); deliveries=0: the reaper's count of lost deliveries starts again.
        in_chunk = failed.filter(position__gte=OuterRef("first_position"), position__lte=OuterRef("last_position"))
        RunChunk.objects.filter(Exists(in_chunk), run=run).update(
            status=RunChunk.Status.QUEUED, claim_token="", deliveries=0
        )
        failed.delete()
        RunChunk.objects.filter(run=run).exclude(status=RunChunk.Status.DONE).update(
            status=RunChunk.Status.QUEUED, claim_token=""
        )
        if run.method != ScoringRun.Method.UPLOAD:
            chunks_enqueue(run, list(run.chunks.filter(status=RunChunk.Status.QUEUED).values_list("pk", flat=True)))
    if run.method == ScoringRun.Method.UPLOAD:
        for chunk_id in run.chunks.filter(status=RunChunk.Status.QUEUED).values_list("pk", flat=True):
            chunk_process(chunk_id=chunk_id, worker="web")
    return retried


# The actions a person takes on a started run, by the names the pages and the API give them.
RUN_ACTIONS = {"pause": run_pause, "resume": run_resume, "cancel": run_cancel, "retry-failed": run_retry_failed}

"""The one background-job mechanism, and its eight job kinds: ingestion jobs, dataset imports, release cuts,
export builds, webhook deliveries, scoring chunks, drafting items and calibrations (a `JobKind` each, registered by
its app).

- **A kind is a declaration** (`JobKind`): its row model and states, its task, and what it runs. The base claims,
  beats, hands back and reaps; a kind whose row is the whole job (ingestion, import, cut, export, delivery) gets its
  Celery task from `job_kind_task`, and drafting items and scoring chunks are claimed item by item or chunk by
  chunk by their own workers through the same `take`, `beat` and `release`.
- **Enqueue**: `job_enqueue` sends a task by name (so no service imports its own task module); the task classes
  use `TransactionAwareTask`, whose `apply_async` waits for the commit when called inside an atomic block, so a
  worker never looks for a row that is not committed yet, and a rolled-back write sends nothing.
- **Claim and heartbeat**: a job row (`JobRow`) holds a claim token, the worker's name and a heartbeat time. A
  worker claims it with one conditional UPDATE, renews the heartbeat every `job_heartbeat_seconds()` while it
  works (from a side thread, `job_heartbeating`, where one step can outlast a beat: a long model call), and
  writes its result only while its token is still on the row, so a duplicated or redelivered task exits quietly.
- **Stall rule** (`job_stall_seconds`, the one threshold of every kind; `job_silent`, the one filter): a row whose
  heartbeat missed TATCURATE_JOB_STALL_BEATS beats in a row is stalled — seconds, not minutes.
- **Reaper**: one beat task (`curation.jobs_reap`, every heartbeat interval) runs `JobKind.reap` of every
  registered kind. It sends a row whose heartbeat went stale back to the queue, or fails it after
  `TATCURATE_JOB_MAX_ATTEMPTS` claims, and is idempotent: it takes a row over by the same conditional UPDATE, so
  two reapers never both re-enqueue it.
- **A worker's own claims**: a worker that shuts down, or starts again under its old name (after kill -9), hands
  back at once the rows it holds of every kind (`jobs_release_for_worker`, connected to Celery's
  worker_shutting_down, worker_shutdown and worker_ready in curation/tasks.py).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from celery import Task, current_app, shared_task
from django.conf import settings
from django.db import connection, models, transaction
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Greatest
from django.utils import timezone
from django.utils.module_loading import import_string

from curation.errors import DomainError

logger = logging.getLogger(__name__)


# --- Enqueue ---------------------------------------------------------------------------------------------------


class TransactionAwareTask(Task):
    """A task sent inside an atomic block is sent once the outermost transaction commits, and never on rollback
    (pretix's TransactionAwareTask). Outside a transaction it is sent at once."""

    abstract = True

    def apply_async(self, args: Any = None, kwargs: Any = None, **options: Any) -> Any:
        if transaction.get_connection().in_atomic_block:
            transaction.on_commit(lambda: super(TransactionAwareTask, self).apply_async(args, kwargs, **options))
            return None
        return super().apply_async(args, kwargs, **options)


def job_task(name: str) -> Task:
    """The registered task called `name`; the task modules are imported on first use (autodiscovery)."""
    if name not in current_app.tasks:
        current_app.loader.import_default_modules()
    return current_app.tasks[name]


def job_enqueue(*, task_name: str, args: Iterable[Any], queue: str | None = None) -> None:
    """Send one job message (after commit when inside a transaction). `queue=None` routes by curation/queues.py."""
    job_task(task_name).apply_async(args=list(args), queue=queue or None)


# --- Claim token and heartbeat ---------------------------------------------------------------------------------


class JobRow(models.Model):
    """The fields of a row that records one unit of background work (the row, not the message, is the record)."""

    claim_token = models.CharField(max_length=40, blank=True)
    worker = models.CharField(max_length=255, blank=True, help_text="Hostname of the worker that last took it")
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class RequestedJob(JobRow):
    """A job row that is the whole of one piece of work a person asked for (an ingestion, a release cut, a dataset
    import): who asked and when, how often a worker claimed it, when it finished and why it failed."""

    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)  # claims by a worker; the reaper gives up after a few
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class ProgressJob(RequestedJob):
    """A requested job that counts the items it has done as it goes (a release cut, an export, a calibration)."""

    items_done = models.PositiveIntegerField(default=0)
    items_total = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True

    @property
    def percent(self) -> int:
        return round(100 * self.items_done / self.items_total) if self.items_total else 0


def job_heartbeat_seconds() -> float:
    """How often a worker renews the claims it holds (TATCURATE_JOB_HEARTBEAT_S)."""
    return float(settings.TATCURATE_JOB_HEARTBEAT_S)


def job_stall_seconds() -> float:
    """After how long without a heartbeat a claimed row is stalled: TATCURATE_JOB_STALL_BEATS missed beats. The
    one threshold of every job kind."""
    return job_heartbeat_seconds() * int(settings.TATCURATE_JOB_STALL_BEATS)


def job_forgotten_seconds() -> float:
    """After how long a queued row that no worker has touched is sent again: its message may have been lost (a
    broker restarted without its data). Fifteen stall periods (2 minutes by default), so a run waiting behind
    others is not flooded with copies of its messages; a worker busy with the run takes such rows itself."""
    return 15 * job_stall_seconds()


def job_stall_cutoff(stall_s: float | None = None, *, now: datetime | None = None) -> datetime:
    """Heartbeats older than this are stalled (`stall_s` defaults to the one rule, `job_stall_seconds`)."""
    return (now or timezone.now()) - timedelta(seconds=job_stall_seconds() if stall_s is None else stall_s)


def job_silent(*, running: str | tuple[str, ...], state_field: str = "status", stall_s: float | None = None) -> Q:
    """The stall rule as a filter: a row in its `running` state (or one of them) whose worker has missed its
    heartbeats (none yet, or the last one before `job_stall_cutoff(stall_s)`). Every reaper, and every claim that
    takes over a silent row, filters with this."""
    held = Q(**{f"{state_field}__in": running}) if isinstance(running, tuple) else Q(**{state_field: running})
    return held & (Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=job_stall_cutoff(stall_s)))


@contextmanager
def job_heartbeating(beat: Callable[[], bool]) -> Iterator[threading.Event]:
    """Call `beat` every heartbeat interval from a side thread while the block runs, so a step that outlasts the
    stall threshold (a slow model call) keeps its claim while its worker lives. Yields an event set once `beat`
    returns False (the claim was taken over). A failing beat (the database restarting) is tried again at the next
    interval on a fresh connection; the work is never held up by it.

    Inside an atomic block no thread is started: another connection cannot see rows that transaction holds, so
    the caller's own beats between its steps are all there is (the inline runs of tests and commands)."""
    lost = threading.Event()
    if transaction.get_connection().in_atomic_block:
        yield lost
        return
    stop = threading.Event()

    def loop() -> None:
        try:
            while not stop.wait(job_heartbeat_seconds()):
                try:
                    if not beat():
                        lost.set()
                        return
                except Exception as error:  # an outage: this beat is missed, the next one reconnects
                    logger.warning("heartbeat missed (%s: %s)", type(error).__name__, error)
                    connection.close()
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=loop, name="job-heartbeat", daemon=True)
    thread.start()
    try:
        yield lost
    finally:
        stop.set()  # not joined: a beat waiting on a database outage must not hold up the work that finished


# --- A job kind: what differs, declared; the rest, once ----------------------------------------------------------


class JobTakenOver(Exception):
    """The reaper (or a redelivered task on another worker) took the row over; this worker stops writing."""


class JobKind:
    """One kind of background job. The mechanism owns the claim (`take`), the heartbeat (`beat`, `hold`,
    `heartbeating`), the end (`finish`, `fail`), the hand-back (`release`, `release_for_worker`) and the reaper
    (`reap`); a kind declares its row model and
    states, its task, and what it runs (`work`, for the kinds whose row is the whole job, run by `run`). The
    defaults are those of a `RequestedJob` row: states pending → running → done/failed, sent again by its task."""

    name: str = ""  # how logs, the reaper's counts and this module's docstring name it
    model: type[models.Model]
    task_name: str = ""
    state_field = "state"
    waiting: Any = "pending"  # the state a row waits in (or a filter of the rows that may be taken)
    running: str = "running"
    done: str = "done"  # the state `finish` writes
    failed: str | None = "failed"
    finished: tuple[str, ...] = ("done", "failed")
    attempts_field = "attempts"
    error_field: str | None = "error"
    is_taken_over_when_silent = True  # `take` also takes a row whose worker went silent
    # Whether an error other than a domain error (a bug, an outage) fails the row as well as being raised for the
    # worker's log and Celery's retry policy; otherwise the row stays claimed and the reaper sends it again.
    is_failed_on_error = False
    # For a kind whose rows are parts of a run (drafting items, scoring chunks): finishes the run once no part is open.
    run_finish: Callable[..., bool] | None = None

    def max_attempts(self) -> int | None:
        """How many claims before the reaper gives a stalled row up (TATCURATE_JOB_MAX_ATTEMPTS)."""
        return int(settings.TATCURATE_JOB_MAX_ATTEMPTS)

    def describe(self, row: Any) -> str:
        return f"{self.name} {row.pk}"

    # Claim, heartbeat, hand-back.

    def claimable(self) -> QuerySet:
        """The rows a worker may claim at all (the scoring chunks of a running run, …)."""
        return self.model._default_manager.all()

    def take(self, pk: int, *, worker: str, waiting: Q | str | None = None, **reset: Any) -> str | None:
        """Claim row `pk` for `worker` in one conditional UPDATE when it waits (`waiting`: a state or a filter,
        `self.waiting` by default) or, if the kind allows, its worker went silent: a fresh token, the worker, a
        heartbeat, one more claim counted, and the fields of `reset` (an earlier claim's progress set back). The
        token, or None when a live worker holds the row or it finished meanwhile (a duplicate message)."""
        waiting = self.waiting if waiting is None else waiting
        may_take = Q(**{self.state_field: waiting}) if isinstance(waiting, str) else waiting
        if self.is_taken_over_when_silent:
            may_take |= job_silent(running=self.running, state_field=self.state_field)
        token = uuid.uuid4().hex
        taken = (
            self.claimable()
            .filter(may_take, pk=pk)
            .update(
                **{self.state_field: self.running, self.attempts_field: F(self.attempts_field) + 1},
                claim_token=token,
                worker=worker,
                heartbeat_at=timezone.now(),
                **reset,
            )
        )
        return token if taken else None

    def mine(self, pk: int, token: str) -> QuerySet:
        """The row while this claim holds it: every write of the claimant goes through this."""
        return self.model._default_manager.filter(pk=pk, claim_token=token)

    def beat(self, pk: int, token: str, **progress: Any) -> bool:
        """Renew the claim (with the `progress` fields); False when another worker (or the reaper) took it over."""
        return bool(self.mine(pk, token).update(heartbeat_at=timezone.now(), **progress))

    def hold(self, pk: int, token: str, **progress: Any) -> None:
        """`beat`, raising JobTakenOver when the claim is gone (a worker's progress callback between its steps)."""
        if not self.beat(pk, token, **progress):
            raise JobTakenOver(pk)

    def heartbeating(self, pk: int, token: str) -> Any:
        """`job_heartbeating` of this claim."""
        return job_heartbeating(lambda: self.beat(pk, token))

    def release(self, pk: int, token: str, *, is_outage: bool = False) -> bool:
        """Hand the claimed row back to the queue (shutdown, time limit, pause, an outage). An outage's claim is
        taken off the attempts again: it is not the row's attempt, so it never adds up to a give-up."""
        waiting = self.waiting if isinstance(self.waiting, str) else "pending"
        attempts = {self.attempts_field: Greatest(F(self.attempts_field) - 1, 0)} if is_outage else {}
        changes = {self.state_field: waiting, "claim_token": "", **attempts}
        return bool(self.model._default_manager.filter(pk=pk, claim_token=token).update(**changes))

    def finish(self, pk: int, token: str, **fields: Any) -> None:
        """Finish the claimed row as done with `fields` (its results; an earlier error cleared unless they say one);
        raise JobTakenOver when the claim is gone. Inside the transaction of the job's own writes, the row lock makes
        a second claimant wait, then find the token gone, so the job is written once."""
        now = timezone.now()
        errors = {self.error_field: ""} if self.error_field else {}
        changes = {self.state_field: self.done, "finished_at": now, "heartbeat_at": now, "claim_token": "", **errors}
        if not self.mine(pk, token).update(**{**changes, **fields}):
            raise JobTakenOver(pk)

    def fail(self, pk: int, token: str, message: str, **fields: Any) -> None:
        """Finish the claimed row as failed with `message`."""
        self.mine(pk, token).update(
            **{self.state_field: self.failed},
            error=message[:4000],
            finished_at=timezone.now(),
            claim_token="",
            **fields,
        )

    # Running one row (the kinds whose row is the whole job).

    def load(self, pk: int) -> Any:
        """The row a task's id names, with what `work` reads of it."""
        return self.model._default_manager.filter(pk=pk).first()

    def is_finished(self, row: Any) -> bool:
        return getattr(row, self.state_field) in self.finished

    def reset(self, row: Any) -> dict[str, Any]:
        """The fields a fresh claim sets back (an earlier claim's progress)."""
        return {}

    def work(self, row: Any, pk: int, token: str) -> None:
        """Do the job under the claim `token`; raise JobTakenOver when a conditional write finds the claim gone."""
        raise NotImplementedError

    def after(self, row: Any) -> None:
        """Called with the row read again once `run` is over (clean up what a finished job leaves)."""

    def run(self, pk: int, *, worker: str = "") -> Any:
        """Run row `pk` once: a finished row, or one a live worker holds, is left alone (a duplicate message exits
        quietly); a domain error fails the row with its message (any other error too, if the kind says so, and is
        raised); a lost claim leaves the row to its new holder."""
        row = self.load(pk)
        if row is None or self.is_finished(row):
            return row
        token = self.take(pk, worker=worker, **self.reset(row))
        if token is not None:
            try:
                self.work(row, pk, token)
            except JobTakenOver:
                pass  # the worker holding the claim now finishes (or fails) the job
            except DomainError as error:
                self.fail(pk, token, error.message)
            except Exception as error:
                if self.is_failed_on_error:
                    self.fail(pk, token, str(error))
                raise
        row.refresh_from_db()
        self.after(row)
        return row

    # The reaper.

    def stalled(self, stall_s: float | None = None) -> QuerySet:
        """The rows whose worker went silent (the one stall rule, `job_silent`)."""
        return self.model._default_manager.filter(
            job_silent(running=self.running, state_field=self.state_field, stall_s=stall_s)
        )

    def held_by(self, worker: str) -> QuerySet:
        """The rows `worker` holds."""
        return self.model._default_manager.filter(**{self.state_field: self.running}, worker=worker)

    def send_again(self, rows: list[Any]) -> None:
        """Send the message of each row sent back to the queue (after commit)."""
        for row in rows:
            job_enqueue(task_name=self.task_name, args=[row.pk])

    def given_up(self, rows: list[Any]) -> None:
        """Called, inside the reaper's transaction, with the rows it failed."""

    def requeue(
        self, rows: QuerySet, *, max_attempts: int | None, why: str = "went silent"
    ) -> tuple[list[Any], list[Any]]:
        """In one transaction, send each of `rows` back to the queue (`send_again`), or fail it once it has been
        claimed `max_attempts` times (never, when None; `given_up`); `why` is what the log says of its worker.
        Returns (requeued, failed) rows.

        Each row is taken by a conditional UPDATE on the values just read (token and heartbeat), so a worker that
        renewed its claim meanwhile, or a second reaper, wins and the row is left alone."""
        waiting = self.waiting if isinstance(self.waiting, str) else "pending"
        requeued: list[Any] = []
        failed: list[Any] = []
        now = timezone.now()
        with transaction.atomic():
            for row in list(rows):
                state = getattr(row, self.state_field)
                same = self.model._default_manager.filter(
                    pk=row.pk, claim_token=row.claim_token, heartbeat_at=row.heartbeat_at, **{self.state_field: state}
                )
                attempts = getattr(row, self.attempts_field)
                if self.failed is not None and max_attempts is not None and attempts >= max_attempts:
                    message = f"Given up after {attempts} attempts: the worker ({row.worker or 'unknown'}) went silent."
                    errors = {self.error_field: message} if self.error_field else {}
                    if same.update(**{self.state_field: self.failed}, claim_token="", finished_at=now, **errors):
                        logger.warning("reaper: %s failed (%s)", self.describe(row), message)
                        failed.append(row)
                elif same.update(**{self.state_field: waiting}, claim_token="", heartbeat_at=now):
                    logger.warning("%s sent again (worker %s: %s)", self.describe(row), row.worker or "none", why)
                    requeued.append(row)
            self.send_again(requeued)
            self.given_up(failed)
        return requeued, failed

    def forgotten_resend(self, stall_s: float | None) -> int:
        """Send again what waits for a message the broker lost (no heartbeat will ever go stale for it); how many.
        A kind whose messages a broker without redelivery can lose says how to find them."""
        return 0

    def reap(self, *, stall_s: float | None = None) -> int:
        """Send each row whose worker went silent back to the queue, or fail it after `max_attempts` claims, then
        finish the runs whose last open part was given up (`run_finish`) and resend what the broker forgot; how
        many were reaped. Run by the beat reaper (`jobs_reap`)."""
        requeued, failed = self.requeue(self.stalled(stall_s), max_attempts=self.max_attempts())
        if self.run_finish is not None:
            for run_id in {row.run_id for row in failed}:
                self.run_finish(run_id=run_id)
        return len(requeued) + len(failed) + self.forgotten_resend(stall_s)

    def release_for_worker(self, *, worker: str) -> int:
        """Send the rows `worker` holds back to the queue at once, whatever their heartbeat (it is shutting down,
        or started again under its old name after dying); never a failure."""
        requeued, _ = self.requeue(self.held_by(worker), max_attempts=None, why="handed it back")
        return len(requeued)


def job_kind_task(kind: JobKind) -> Task:
    """The Celery task of a kind whose row is the whole job: an id in, `kind.run`, the row's state out."""

    @shared_task(name=kind.task_name, acks_late=True, bind=True, base=TransactionAwareTask)
    def job_run_task(self: Task, pk: int) -> str:
        row = kind.run(pk, worker=self.request.hostname or "")
        return getattr(row, kind.state_field) if row is not None else "missing"

    return job_run_task


# --- The one beat reaper ---------------------------------------------------------------------------------------

_KIND_PATHS: set[str] = set()


def job_kinds_register(*paths: str) -> None:
    """Register job kinds by the dotted path of their `JobKind` (each app in its AppConfig.ready, so the core
    names none of the apps above it)."""
    _KIND_PATHS.update(paths)


def job_kinds() -> list[JobKind]:
    """Every registered job kind, by name."""
    return sorted((import_string(path) for path in _KIND_PATHS), key=lambda kind: kind.name)


def _each_kind(call: Callable[[JobKind], int], what: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for kind in job_kinds():
        try:
            counts[kind.name] = int(call(kind))
        except Exception:  # one failing kind (the database briefly away) does not stop the rest
            logger.exception("%s: %s failed", kind.name, what)
            counts[kind.name] = -1
    return counts


def jobs_release_for_worker(*, worker: str) -> dict[str, int]:
    """Hand back every row `worker` holds, of every kind (the worker is shutting down, or starting again under its
    old name after dying), so its work is taken over at once rather than when its heartbeats go stale. The beat
    reaper still covers what is missed."""
    return _each_kind(lambda kind: kind.release_for_worker(worker=worker), "hand-back")


def jobs_reap() -> dict[str, int]:
    """Run every kind's reaper (the beat task `curation.jobs_reap`)."""
    return _each_kind(lambda kind: kind.reap(), "reaper")

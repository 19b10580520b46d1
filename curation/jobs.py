"""The one background-job mechanism of drafting items, scoring chunks and export builds.

- **Enqueue**: `job_enqueue` sends a task by name (so no service imports its own task module); the task classes
  use `TransactionAwareTask`, whose `apply_async` waits for the commit when called inside an atomic block, so a
  worker never looks for a row that is not committed yet, and a rolled-back write sends nothing.
- **Claim and heartbeat**: a job row (`JobRow`) holds a claim token, the worker's name and a heartbeat time. A
  worker claims it with one conditional UPDATE, renews the heartbeat every `job_heartbeat_seconds()` while it
  works (from a side thread, `job_heartbeating`, where one step can outlast a beat: a long model call), and
  writes its result only while its token is still on the row, so a duplicated or redelivered task exits quietly.
- **Stall rule** (`job_stall_seconds`, the one threshold of every kind; `job_silent`, the one filter): a row whose
  heartbeat missed TATCURATE_JOB_STALL_BEATS beats in a row is stalled — seconds, not minutes.
- **Reaper**: each app registers the function that reaps its kind of job (`reaper_register`, in its AppConfig);
  one beat task (`curation.jobs_reap`, every heartbeat interval) runs them all. A reaper sends a row whose
  heartbeat went stale back to the queue, or fails it after `TATCURATE_JOB_MAX_ATTEMPTS` claims, and is
  idempotent: it takes a row over by the same conditional UPDATE, so two reapers never both re-enqueue it.
- **A worker's own claims**: each kind also registers how to hand back the rows a named worker holds; a worker
  that shuts down, or starts again under its old name (after kill -9), hands them back at once
  (`jobs_release_for_worker`, connected to Celery's worker_shutting_down, worker_shutdown and worker_ready in
  curation/tasks.py).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from celery import Task, current_app
from django.conf import settings
from django.db import connection, models, transaction
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Greatest
from django.utils import timezone
from django.utils.module_loading import import_string

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


def job_token() -> str:
    return uuid.uuid4().hex


def job_claim(
    *,
    rows: QuerySet,
    token: str,
    worker: str,
    running: str,
    attempts_field: str,
    state_field: str = "status",
    **extra: Any,
) -> bool:
    """Take the rows of `rows` (already filtered to those that may be taken) in one conditional UPDATE."""
    return bool(
        rows.update(
            **{state_field: running, attempts_field: F(attempts_field) + 1},
            claim_token=token,
            worker=worker,
            heartbeat_at=timezone.now(),
            **extra,
        )
    )


def job_take(
    model: type[models.Model] | QuerySet,
    pk: int,
    *,
    worker: str,
    waiting: Q | str = "pending",
    running: str = "running",
    state_field: str = "state",
    attempts_field: str = "attempts",
    **reset: Any,
) -> str | None:
    """Claim row `pk` of `model` (or of a queryset, the rows it may be taken among) for `worker` when it waits
    (`waiting`: that state, or a filter) or its worker went silent in `running` (`job_silent`), in one conditional
    UPDATE: a fresh token, the worker, a heartbeat, one more claim counted in `attempts_field`, and the fields of
    `reset` (an earlier claim's progress set back). The claim's token, or None when a live worker holds the row or
    it finished meanwhile (a duplicate message). The claim of every job kind that is one row: ingestions, dataset
    imports, release cuts, export builds, webhook deliveries and scoring chunks."""
    token = job_token()
    rows = model._default_manager.all() if isinstance(model, type) else model
    may_wait = Q(**{state_field: waiting}) if isinstance(waiting, str) else waiting
    taken = job_claim(
        rows=rows.filter(may_wait | job_silent(running=running, state_field=state_field), pk=pk),
        token=token,
        worker=worker,
        running=running,
        attempts_field=attempts_field,
        state_field=state_field,
        **reset,
    )
    return token if taken else None


def job_heartbeat(*, rows: QuerySet, token: str) -> bool:
    """Renew the claim; False when another worker (or the reaper) has taken the row over."""
    return bool(rows.filter(claim_token=token).update(heartbeat_at=timezone.now()))


def job_release(
    *, rows: QuerySet, token: str, waiting: str, state_field: str = "status", uncount: str | None = None
) -> bool:
    """Hand a claimed row back to the queue (shutdown, time limit, pause, an outage). `uncount` names the attempts
    field to take this claim off again: an outage is not the row's attempt, so it never adds up to a give-up."""
    extra = {uncount: Greatest(F(uncount) - 1, 0)} if uncount else {}
    return bool(rows.filter(claim_token=token).update(**{state_field: waiting, "claim_token": ""}, **extra))


def job_heartbeat_seconds() -> float:
    """How often a worker renews the claims it holds (TATCURATE_JOB_HEARTBEAT_S)."""
    return float(settings.TATCURATE_JOB_HEARTBEAT_S)


def job_stall_seconds() -> float:
    """After how long without a heartbeat a claimed row is stalled: TATCURATE_JOB_STALL_BEATS missed beats. The
    one threshold of drafting items, scoring chunks, export builds and release cuts."""
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


def job_reap(
    *,
    stalled: QuerySet,
    waiting: str,
    failed: str | None,
    attempts_field: str,
    max_attempts: int | None,
    state_field: str = "status",
    describe: Callable[[Any], str] = str,
    error_field: str | None = "error",
) -> tuple[list[Any], list[Any]]:
    """Send each stalled row back to `waiting`, or to `failed` once it has been claimed `max_attempts` times
    (never, when `max_attempts` is None). A failed row gets a `finished_at` and, unless `error_field` is None, the
    reason in that field.

    Each row is taken by a conditional UPDATE on the values just read (token and heartbeat), so a worker that
    renewed its claim meanwhile, or a second reaper, wins and the row is left alone. Returns (requeued, failed)
    rows; the caller enqueues the requeued ones."""
    requeued: list[Any] = []
    given_up: list[Any] = []
    now = timezone.now()
    for row in list(stalled):
        same = type(row).objects.filter(
            pk=row.pk,
            **{state_field: getattr(row, state_field)},
            claim_token=row.claim_token,
            heartbeat_at=row.heartbeat_at,
        )
        attempts = getattr(row, attempts_field)
        if failed is not None and max_attempts is not None and attempts >= max_attempts:
            message = f"Given up after {attempts} attempts: the worker ({row.worker or 'unknown'}) went silent."
            errors = {error_field: message} if error_field else {}
            if same.update(**{state_field: failed, "claim_token": "", "finished_at": now, **errors}):
                logger.warning("reaper: %s failed (%s)", describe(row), message)
                given_up.append(row)
        elif same.update(**{state_field: waiting, "claim_token": "", "heartbeat_at": now}):
            logger.warning("reaper: %s sent again (worker %s went silent)", describe(row), row.worker)
            requeued.append(row)
    return requeued, given_up


def job_requeue(
    *,
    rows: QuerySet,
    task_name: str,
    max_attempts: int | None,
    describe: Callable[[Any], str] = str,
    waiting: str = "pending",
    failed: str = "failed",
    state_field: str = "state",
    given_up: Callable[[Any], None] | None = None,
) -> int:
    """Reap `rows` (stalled, or held by a worker that is stopping) with `job_reap`, in one transaction, and send
    each row sent back to the queue its message again after commit (`given_up` is called, after commit, with each
    row failed instead); how many rows were reaped. The reaper and the worker hand-back of the job kinds whose row
    is the whole job (ingestions, dataset imports)."""
    with transaction.atomic():
        requeued, failed_rows = job_reap(
            stalled=rows,
            waiting=waiting,
            failed=failed,
            attempts_field="attempts",
            max_attempts=max_attempts,
            state_field=state_field,
            describe=describe,
        )
        for row in requeued:
            job_enqueue(task_name=task_name, args=[row.pk])
        for row in failed_rows if given_up is not None else ():
            transaction.on_commit(lambda row=row: given_up(row))
    return len(requeued) + len(failed_rows)


# --- The one beat reaper ---------------------------------------------------------------------------------------

_REAPERS: dict[str, str] = {}
_WORKER_RELEASERS: dict[str, str] = {}


def reaper_register(*, kind: str, path: str, worker_path: str | None = None) -> None:
    """Register `path` (a dotted function returning how many rows it reaped) as the reaper of `kind`, and
    `worker_path` (a function of `worker=` returning how many rows it handed back) as the way to hand back at once
    the rows of `kind` a named worker holds."""
    _REAPERS[kind] = path
    if worker_path is not None:
        _WORKER_RELEASERS[kind] = worker_path


def jobs_release_for_worker(*, worker: str) -> dict[str, int]:
    """Hand back every row `worker` holds, of every kind (the worker is shutting down, or starting again under its
    old name after dying), so its work is taken over at once rather than when its heartbeats go stale. One failing
    kind (the database briefly away) does not stop the rest; the beat reaper still covers what is missed."""
    counts: dict[str, int] = {}
    for kind, path in sorted(_WORKER_RELEASERS.items()):
        try:
            counts[kind] = int(import_string(path)(worker=worker))
        except Exception:
            logger.exception("could not hand back the %s of %s", kind, worker)
            counts[kind] = -1
    return counts


def jobs_reap() -> dict[str, int]:
    """Run every registered reaper (the beat task `curation.jobs_reap`); one failing kind does not stop the rest."""
    counts: dict[str, int] = {}
    for kind, path in sorted(_REAPERS.items()):
        try:
            counts[kind] = int(import_string(path)())
        except Exception:
            logger.exception("the %s reaper failed", kind)
            counts[kind] = -1
    return counts

"""The scoring half of the beat reaper (curation.jobs_reap): stalled and forgotten chunks are sent again, or given
up after too many deliveries."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from curation.jobs import job_forgotten_seconds, job_reap, job_silent, job_stall_cutoff, job_stall_seconds
from scoring.runs.chunks import chunk_predictions_fail
from scoring.runs.models import RunChunk, ScoringRun
from scoring.runs.states import chunks_enqueue, run_finish_if_done

Status = ScoringRun.Status


def runs_resume_for_worker(*, worker: str) -> int:
    """A worker that shuts down, or starts again under its old name (after kill -9, OOM, a restart), hands back at
    once the chunks it (or its dead incarnation) held, instead of waiting for their heartbeat to go stale (Celery's
    worker_shutdown and worker_ready, curation.jobs). Returns how many."""
    held = RunChunk.objects.filter(run__status=Status.RUNNING, status=RunChunk.Status.RUNNING, worker=worker)
    with transaction.atomic():
        requeued, _ = job_reap(
            stalled=held.select_related("run"),
            waiting=RunChunk.Status.QUEUED,
            failed=None,
            attempts_field="deliveries",
            max_attempts=None,
            describe=lambda chunk: f"chunk {chunk.index} of run {chunk.run_id}",
            error_field=None,
        )
        for chunk in requeued:
            chunks_enqueue(chunk.run, [chunk.pk])
    return len(requeued)


def runs_reap(*, stall_s: float | None = None) -> int:
    """Send again the chunks of running runs whose worker went silent (killed, lost); returns how many. Run by the
    beat reaper (curation.jobs_reap). A chunk delivered TATCURATE_JOB_MAX_ATTEMPTS times (its items keep killing
    the worker) is given up instead: its unanswered items become failed predictions, which "retry failed" redoes.
    `stall_s` defaults to the one stall rule (curation.jobs.job_stall_seconds)."""
    forgotten_s = job_forgotten_seconds() if stall_s is None else 3 * stall_s
    stall_s = job_stall_seconds() if stall_s is None else stall_s
    stalled = RunChunk.objects.filter(
        job_silent(running=RunChunk.Status.RUNNING, stall_s=stall_s), run__status=Status.RUNNING
    )
    # A queued chunk long after its message was sent: the message was lost (a broker without redelivery).
    forgotten = RunChunk.objects.filter(
        run__status=Status.RUNNING,
        status=RunChunk.Status.QUEUED,
        enqueued_at__lt=job_stall_cutoff(forgotten_s),
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
                chunks_enqueue(chunk.run, [chunk.pk])
            for chunk in failed:  # in the same transaction as the chunk's "done": both happen, or neither
                chunk_predictions_fail(chunk)
            reaped += len(requeued) + len(failed)
            given_up += failed
    for run_id in {chunk.run_id for chunk in given_up}:
        run_finish_if_done(run_id=run_id)
    return reaped

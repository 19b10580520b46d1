"""Big dataset imports off the request path: the web request checks the file (its format parsed whole, so a
malformed file is refused at once with the JSON path of the first bad value) and stores it; a worker of the exports
queue imports it with `dataset_import`, the one import of the page, the API and the command, in its one transaction.

A job row (`ImportJob`, curation/jobs.py): claimed by one conditional UPDATE, its heartbeat renewed from a side
thread while the import writes (the import's transaction never touches the job row, so the beats and the progress
the page polls are seen at once), taken over by the beat reaper when its worker goes silent. The import is
idempotent by the file's sha256, so a worker that dies after the import committed but before it marked the job
done leaves the next one nothing to write but the mark."""

from __future__ import annotations

import hashlib
import logging
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from curation.datasets.models import ImportJob, ImportRecord
from curation.datasets.services import ImportResult, dataset_import, dataset_read, release_name_checked
from curation.errors import Conflict, DomainError
from curation.jobs import (
    job_enqueue,
    job_heartbeating,
    job_requeue,
    job_silent,
    job_take,
)
from curation.models import Project
from curation.services.projects import require_role
from curation.states import Role

logger = logging.getLogger(__name__)

TASK_NAME = "curation.dataset_import"
FINISHED = (ImportJob.State.DONE, ImportJob.State.FAILED)


def _stored_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "imports"


def import_job_file(job: ImportJob) -> Path:
    """Where the job's file waits (a name the server made up: nothing of the upload's name reaches the path)."""
    return _stored_root() / job.stored


def dataset_import_request(
    *,
    project: Project,
    actor: AbstractBaseUser | None,
    format: str,
    source_name: str,
    content: bytes,
    as_release: str = "",
) -> ImportResult | ImportJob:
    """Import now (a file of fewer than TATCURATE_DATASET_IMPORT_ASYNC_MIN_QUESTIONS questions: the ImportResult)
    or on a worker of the exports queue (the ImportJob that tracks it; its message is sent after commit). Either
    way the same checks refuse a bad file before anything is written: the role, the format, the whole file's
    syntax and shape, the release name. A file already imported, or already waiting, is not queued twice."""
    if actor is not None:
        require_role(user=actor, project=project, roles=(Role.MANAGER,), action="import datasets")
    sha256 = hashlib.sha256(content).hexdigest()
    if ImportRecord.objects.filter(project=project, format=format, source_sha256=sha256).exists():
        return dataset_import(project=project, actor=actor, format=format, source_name=source_name, content=content)
    waiting = ImportJob.objects.filter(project=project, format=format, source_sha256=sha256).exclude(state__in=FINISHED)
    if (job := waiting.first()) is not None:
        return job
    parsed = dataset_read(format=format, content=content)
    if as_release:
        release_name_checked(as_release)
    if len(parsed.questions) < settings.TATCURATE_DATASET_IMPORT_ASYNC_MIN_QUESTIONS:
        return dataset_import(
            project=project,
            actor=actor,
            format=format,
            source_name=source_name,
            content=content,
            as_release=as_release,
        )
    stored = f"{uuid.uuid4().hex}.{format}"
    path = _stored_root() / stored
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.write_bytes(content)
        with transaction.atomic():
            job = ImportJob.objects.create(
                project=project,
                format=format,
                source_name=source_name[:500],
                source_sha256=sha256,
                source_bytes=len(content),
                stored=stored,
                as_release=as_release,
                questions_total=len(parsed.questions),
                requested_by=actor,
            )
            job_enqueue(task_name=TASK_NAME, args=[job.pk])  # sent after commit
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return job


class _TakenOver(Exception):
    """The reaper (or a redelivered task on another worker) took the job over; this worker's import rolls back."""


def _silent(stall_s: float | None = None) -> Q:
    """A running job whose worker missed its heartbeats (the one stall rule, curation.jobs)."""
    return job_silent(running=ImportJob.State.RUNNING, state_field="state", stall_s=stall_s)


def dataset_import_run(*, job_id: int, worker: str = "") -> ImportJob | None:
    """Import one queued file (the worker's side of `dataset_import_request`). A pending job, or a running one whose
    worker went silent, is claimed by one conditional UPDATE; a finished one, or one a live worker holds, is left
    alone. The import rolls back whole when the claim is lost midway; a domain error (the requester is no longer a
    manager, a release of that name cannot be cut) fails the job with its message, and nothing is written."""
    job = ImportJob.objects.select_related("project", "requested_by").filter(pk=job_id).first()
    if job is None or job.state in FINISHED:
        return job
    token = job_take(ImportJob, job_id, worker=worker, questions_done=0)
    if token is None:
        job.refresh_from_db()
        return job  # held by a live worker, or finished meanwhile: a duplicate message exits quietly
    mine = ImportJob.objects.filter(pk=job_id, claim_token=token)
    done = [0]

    def beat() -> bool:  # the side thread, on its own connection: the progress the page shows
        return bool(mine.update(heartbeat_at=timezone.now(), questions_done=done[0]))

    try:
        with job_heartbeating(beat) as lost:

            def progress(count: int) -> None:
                done[0] += count
                if lost.is_set():
                    raise _TakenOver(job_id)

            try:
                result = dataset_import(
                    project=job.project,
                    actor=job.requested_by,
                    format=job.format,
                    source_name=job.source_name,
                    content=import_job_file(job).read_bytes(),
                    as_release=job.as_release,
                    progress=progress,
                )
            except IntegrityError:  # a worker that held the claim before committed the same file meanwhile
                result = None
        record = result.record if result is not None else _record_of(job)
        mine.update(
            state=ImportJob.State.DONE,
            record=record,
            questions_done=job.questions_total,
            finished_at=timezone.now(),
            heartbeat_at=timezone.now(),
            claim_token="",
            error="",
        )
    except _TakenOver:
        pass  # the worker holding the claim now imports (or fails) the file
    except DomainError as error:
        mine.update(
            state=ImportJob.State.FAILED, error=error.message[:4000], finished_at=timezone.now(), claim_token=""
        )
    except FileNotFoundError:
        mine.update(
            state=ImportJob.State.FAILED,
            error="The stored file is gone (removed from the media folder); upload it again.",
            finished_at=timezone.now(),
            claim_token="",
        )
    job.refresh_from_db()
    if job.state in FINISHED:
        import_job_file(job).unlink(missing_ok=True)
    return job


def import_job_dismiss(*, job: ImportJob, actor: AbstractBaseUser | None) -> None:
    """Remove a failed job from the list (nothing of it was imported; its file is already gone). Managers only;
    a waiting, running or finished job cannot be dismissed."""
    if actor is not None:
        require_role(user=actor, project=job.project, roles=(Role.MANAGER,), action="dismiss imports")
    deleted, _ = ImportJob.objects.filter(pk=job.pk, state=ImportJob.State.FAILED).delete()
    if not deleted:
        raise Conflict(
            f"The import of {job.source_name} is {job.get_state_display().lower()}; only a failed one is dismissed."
        )
    import_job_file(job).unlink(missing_ok=True)


def _record_of(job: ImportJob) -> ImportRecord | None:
    return ImportRecord.objects.filter(project=job.project, format=job.format, source_sha256=job.source_sha256).first()


def import_jobs_reap(*, stall_s: float | None = None) -> int:
    """Send a job whose worker went silent back to the queue, or fail it after TATCURATE_JOB_MAX_ATTEMPTS claims
    (and remove its stored file: nothing of it was imported). How many were reaped; run by the beat reaper."""
    return job_requeue(
        rows=ImportJob.objects.filter(_silent(stall_s)),
        task_name=TASK_NAME,
        max_attempts=settings.TATCURATE_JOB_MAX_ATTEMPTS,
        describe=_describe,
        given_up=lambda job: import_job_file(job).unlink(missing_ok=True),
    )


def import_jobs_release_for_worker(*, worker: str) -> int:
    """Send the jobs `worker` was running back to the queue at once (it is shutting down, or started again under its
    old name after dying); never a failure. Called through curation.jobs on the worker signals."""
    return job_requeue(
        rows=ImportJob.objects.filter(state=ImportJob.State.RUNNING, worker=worker),
        task_name=TASK_NAME,
        max_attempts=None,
        describe=_describe,
    )


def _describe(job: Any) -> str:
    return f"dataset import {job.pk} ({job.source_name})"

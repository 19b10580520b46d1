"""Ingestion off the request path: a door checks and stores the uploads and queues an IngestJob; a worker reads
them in a bounded child process (curation/papers/bounded.py) and stores every paper in one transaction.

Managers only. If any source is refused (unsafe archive, not LaTeX, a limit hit) nothing is stored and the job says
why; a failed job can be retried or discarded. The `ingest_papers` command reads through the same child.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from curation.errors import Conflict, DomainError, InvalidInput
from curation.jobs import (
    job_enqueue,
    job_heartbeat,
    job_heartbeat_seconds,
    job_requeue,
    job_silent,
    job_take,
)
from curation.models import Batch, Project
from curation.papers.bounded import IngestLimits, LimitExceeded, sources_read_bounded
from curation.papers.models import IngestJob
from curation.papers.reading import check_latex_source, extraction_from_dict
from curation.papers.services import (
    IngestResult,
    PaperSource,
    _default_source_name,
    _local_path,
    _require_manager,
    archive_limits,
    arxiv_id_from_name,
    paper_store,
)

TASK_NAME = "curation.paper_ingest"
FINISHED = (IngestJob.State.DONE, IngestJob.State.FAILED, IngestJob.State.DISCARDED)
STAGE_OF_PROGRESS = {"unpacking": IngestJob.Stage.UNPACKING, "extracting": IngestJob.Stage.EXTRACTING}


def ingest_limits() -> IngestLimits:
    """The bounds of the child that reads sources (TATCURATE_INGEST_* and the archive limits in settings)."""
    return IngestLimits(
        cpu_s=settings.TATCURATE_INGEST_CPU_S,
        wall_s=settings.TATCURATE_INGEST_WALL_S,
        memory_bytes=settings.TATCURATE_INGEST_MEMORY_BYTES,
        archive=archive_limits(),
    )


def _uploads_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "ingest"


def ingest_job_folder(job: IngestJob) -> Path:
    return _uploads_root() / job.folder


def ingest_job_request(
    *, project: Project, actor: AbstractBaseUser | None, uploads: Sequence[Any], batch: Batch | None = None
) -> IngestJob:
    """Check each upload's size and type, store it, and queue one job reading them all (sent after commit); the
    request returns at once. If any upload is refused nothing is stored and InvalidInput gives each reason."""
    _require_manager(project=project, actor=actor, batch=batch)
    if not uploads:
        raise InvalidInput("Choose at least one .tex file or source archive.")
    limits = archive_limits()
    folder = uuid.uuid4().hex
    root = _uploads_root() / folder
    files: list[dict[str, Any]] = []
    rejected: list[dict[str, str]] = []
    try:
        for number, upload in enumerate(uploads):
            slot = root / str(number)
            slot.mkdir(parents=True)
            try:
                path = _local_path(upload, slot, limits)
                name = _default_source_name(upload, path)
                check_latex_source(path, name)
            except InvalidInput as error:
                source_name = _default_source_name(upload, None)
                rejected.append({"source_name": source_name, "reason": error.message.removeprefix(f"{source_name}: ")})
                continue
            files.append({"name": name, "stored": path.relative_to(root).as_posix(), "size": path.stat().st_size})
        if rejected:
            reasons = "; ".join(f"{item['source_name']}: {item['reason']}" for item in rejected)
            raise InvalidInput(f"Nothing was stored. {reasons}", detail={"rejected": rejected})
        with transaction.atomic():
            job = IngestJob.objects.create(project=project, batch=batch, folder=folder, files=files, requested_by=actor)
            job_enqueue(task_name=TASK_NAME, args=[job.pk])  # sent after commit
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return job


class _TakenOver(Exception):
    """The reaper (or a redelivered task on another worker) took the job over; this worker stops writing."""


def _silent(stall_s: float | None = None) -> Q:
    """A running job whose worker missed its heartbeats (the one stall rule, curation.jobs)."""
    return job_silent(running=IngestJob.State.RUNNING, state_field="state", stall_s=stall_s)


def ingest_job_run(*, job_id: int, worker: str = "") -> IngestJob | None:
    """Read and store one queued job (the worker's side of `ingest_job_request`). Claimed by one conditional
    UPDATE (a pending job, or a running one whose worker went silent); every later write is conditional on this
    worker's claim token, and the papers and the job's "done" are written in one transaction, so a job is stored
    exactly once and a worker that lost its claim leaves nothing behind. A finished job is left alone."""
    job = IngestJob.objects.select_related("project", "batch", "requested_by").filter(pk=job_id).first()
    if job is None or job.state in FINISHED:
        return job
    token = job_take(
        IngestJob,
        job_id,
        worker=worker,
        stage=IngestJob.Stage.STORED,
        files_done=0,
        tables_found=0,
        paragraphs_found=0,
        current_file="",
    )
    if token is None:
        job.refresh_from_db()
        return job  # held by a live worker, or finished meanwhile: a duplicate message exits quietly
    mine = IngestJob.objects.filter(pk=job_id, claim_token=token)
    found = {"tables": 0, "paragraphs": 0}

    def progress(report: dict[str, Any]) -> None:
        changes: dict[str, Any] = {"current_file": str(report.get("file", ""))[:255], "heartbeat_at": timezone.now()}
        if report.get("stage") in STAGE_OF_PROGRESS:
            changes["stage"] = STAGE_OF_PROGRESS[report["stage"]]
        if report.get("stage") == "extracted":
            found["tables"] += int(report.get("tables", 0))
            found["paragraphs"] += int(report.get("paragraphs", 0))
            changes.update(tables_found=found["tables"], paragraphs_found=found["paragraphs"])
        changes["files_done"] = int(report.get("files_done", 0))
        if not mine.update(**changes):
            raise _TakenOver(job_id)

    def tick() -> None:
        if not job_heartbeat(rows=IngestJob.objects.filter(pk=job_id), token=token):
            raise _TakenOver(job_id)

    root = ingest_job_folder(job)
    try:
        answers = sources_read_bounded(
            files=[(root / item["stored"], item["name"]) for item in job.files],
            limits=ingest_limits(),
            progress=progress,
            tick=tick,
            tick_s=job_heartbeat_seconds(),
        )
        refused = [{"source_name": a["source_name"], "reason": a["refused"]} for a in answers if "refused" in a]
        if refused:
            reasons = "; ".join(f"{item['source_name']}: {item['reason']}" for item in refused)
            _fail(mine, f"Nothing was stored. {reasons}", limit="refused", rejected=refused)
        else:
            if not mine.update(stage=IngestJob.Stage.SAVING, heartbeat_at=timezone.now()):
                raise _TakenOver(job_id)
            _store_all(job, mine, answers)
    except _TakenOver:
        pass  # the worker holding the claim now finishes (or fails) the job
    except LimitExceeded as error:
        _fail(mine, f"Nothing was stored. {error.message}", limit=error.limit)
    except DomainError as error:  # the requester is no longer a manager, the batch went away, …
        _fail(mine, error.message, limit="")
    job.refresh_from_db()
    if job.state == IngestJob.State.DONE:
        shutil.rmtree(root, ignore_errors=True)
    return job


def _store_all(job: IngestJob, mine: Any, answers: list[dict[str, Any]]) -> None:
    sources = [
        PaperSource(
            source_name=answer["source_name"],
            sha256=answer["sha256"],
            arxiv_id=arxiv_id_from_name(answer["source_name"]),
            extraction=extraction_from_dict(answer["extraction"]),
        )
        for answer in answers
    ]
    with transaction.atomic():
        results = [
            paper_store(project=job.project, actor=job.requested_by, source=source, batch=job.batch)
            for source in sources
        ]
        # Inside the papers' transaction: a second claimant waits on the row lock, then finds the token gone.
        if not mine.update(
            state=IngestJob.State.DONE,
            stage=IngestJob.Stage.DONE,
            files_done=len(job.files),
            results=[result.as_dict() for result in results],
            finished_at=timezone.now(),
            heartbeat_at=timezone.now(),
            claim_token="",
            error="",
            limit="",
        ):
            raise _TakenOver(job.pk)


def _fail(mine: Any, message: str, *, limit: str, rejected: list[dict[str, str]] | None = None) -> None:
    mine.update(
        state=IngestJob.State.FAILED,
        error=message[:4000],
        limit=limit,
        rejected=rejected or [],
        finished_at=timezone.now(),
        claim_token="",
    )


def ingest_job_retry(*, job: IngestJob, actor: AbstractBaseUser | None) -> IngestJob:
    """Queue a failed job again with its stored uploads (the reaper counts its attempts afresh). Managers only."""
    _require_manager(project=job.project, actor=actor, batch=None)
    with transaction.atomic():
        if not IngestJob.objects.filter(pk=job.pk, state=IngestJob.State.FAILED).update(
            state=IngestJob.State.PENDING,
            stage=IngestJob.Stage.STORED,
            error="",
            limit="",
            rejected=[],
            attempts=0,
            files_done=0,
            finished_at=None,
        ):
            raise Conflict(f"Ingestion {job.pk} is {job.get_state_display().lower()}; only a failed one is retried.")
        job_enqueue(task_name=TASK_NAME, args=[job.pk])  # sent after commit
    job.refresh_from_db()
    return job


def ingest_job_discard(*, job: IngestJob, actor: AbstractBaseUser | None) -> IngestJob:
    """Drop a failed or still waiting job and its stored uploads; nothing of it was stored as papers. Managers
    only; a running or finished job cannot be discarded."""
    _require_manager(project=job.project, actor=actor, batch=None)
    waiting = (IngestJob.State.FAILED, IngestJob.State.PENDING)
    if not IngestJob.objects.filter(pk=job.pk, state__in=waiting).update(
        state=IngestJob.State.DISCARDED, claim_token="", finished_at=timezone.now()
    ):
        raise Conflict(f"Ingestion {job.pk} is {job.get_state_display().lower()}; it cannot be discarded now.")
    shutil.rmtree(ingest_job_folder(job), ignore_errors=True)
    job.refresh_from_db()
    return job


def _requeue(rows: Any, *, max_attempts: int | None) -> int:
    """Send `rows` back to the queue (after commit), or fail those claimed `max_attempts` times; how many."""
    return job_requeue(
        rows=rows, task_name=TASK_NAME, max_attempts=max_attempts, describe=lambda job: f"ingestion {job.pk}"
    )


def ingest_jobs_reap(*, stall_s: float | None = None) -> int:
    """Send a job whose worker went silent back to the queue, or fail it after TATCURATE_JOB_MAX_ATTEMPTS claims;
    nothing of it was stored. Returns how many were reaped. Run by the beat reaper (curation.jobs_reap)."""
    return _requeue(IngestJob.objects.filter(_silent(stall_s)), max_attempts=settings.TATCURATE_JOB_MAX_ATTEMPTS)


def ingest_jobs_release_for_worker(*, worker: str) -> int:
    """Send the jobs `worker` was running back to the queue at once, whatever their heartbeat (it is shutting down,
    or started again under its old name after dying); never a failure. Called through curation.jobs on Celery's
    worker_shutting_down, worker_shutdown and worker_ready."""
    return _requeue(IngestJob.objects.filter(state=IngestJob.State.RUNNING, worker=worker), max_attempts=None)


def paper_ingest_bounded(
    *, project: Project, actor: AbstractBaseUser | None, path: Path, batch: Batch | None = None
) -> IngestResult:
    """Read one local source (a .tex, a folder or an archive) through the same bounded child as the worker, then
    store it in one transaction: the `ingest_papers` command's door. InvalidInput says why a source is refused."""
    _require_manager(project=project, actor=actor, batch=batch)
    name = path.name or str(path)
    try:
        (answer,) = sources_read_bounded(files=[(path.resolve(), name)], limits=ingest_limits())
    except LimitExceeded as error:
        raise InvalidInput(error.message, detail={"source_name": name, "limit": error.limit}) from error
    if "refused" in answer:
        raise InvalidInput(f"{name}: {answer['refused']}", detail={"source_name": name})
    source = PaperSource(
        source_name=name,
        sha256=answer["sha256"],
        arxiv_id=arxiv_id_from_name(name),
        extraction=extraction_from_dict(answer["extraction"]),
    )
    return paper_store(project=project, actor=actor, source=source, batch=batch)

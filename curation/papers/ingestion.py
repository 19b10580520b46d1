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
from django.utils import timezone

from curation.errors import Conflict, InvalidInput
from curation.jobs import JobKind, job_enqueue, job_heartbeat_seconds
from curation.models import Batch, Project
from curation.papers.bounded import IngestLimits, LimitExceeded, sources_read_bounded
from curation.papers.models import IngestJob
from curation.papers.reading import check_latex_source
from curation.papers.services import (
    IngestResult,
    PaperSource,
    _local_path,
    _require_manager,
    _safe_file_name,
    archive_limits,
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
                name = path.name  # the upload's name, made safe
                check_latex_source(path, name)
            except InvalidInput as error:
                source_name = _safe_file_name(upload.name or "upload")
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


class IngestJobs(JobKind):
    """Ingestion jobs: a worker reads and stores one queued upload (the worker's side of `ingest_job_request`).
    Every write is conditional on the worker's claim token, and the papers and the job's "done" are written in one
    transaction, so a job is stored exactly once and a worker that lost its claim leaves nothing behind."""

    name = "ingestion jobs"
    model = IngestJob
    task_name = TASK_NAME
    finished = FINISHED

    def load(self, pk: int) -> IngestJob | None:
        return IngestJob.objects.select_related("project", "batch", "requested_by").filter(pk=pk).first()

    def reset(self, row: IngestJob) -> dict[str, Any]:
        return {
            "stage": IngestJob.Stage.STORED,
            "files_done": 0,
            "tables_found": 0,
            "paragraphs_found": 0,
            "current_file": "",
        }

    def work(self, job: IngestJob, pk: int, token: str) -> None:
        found = {"tables": 0, "paragraphs": 0}

        def progress(report: dict[str, Any]) -> None:
            changes: dict[str, Any] = {"current_file": str(report.get("file", ""))[:255]}
            if report.get("stage") in STAGE_OF_PROGRESS:
                changes["stage"] = STAGE_OF_PROGRESS[report["stage"]]
            if report.get("stage") == "extracted":
                found["tables"] += int(report.get("tables", 0))
                found["paragraphs"] += int(report.get("paragraphs", 0))
                changes.update(tables_found=found["tables"], paragraphs_found=found["paragraphs"])
            changes["files_done"] = int(report.get("files_done", 0))
            self.hold(pk, token, **changes)

        root = ingest_job_folder(job)
        try:
            answers = sources_read_bounded(
                files=[(root / item["stored"], item["name"]) for item in job.files],
                limits=ingest_limits(),
                progress=progress,
                tick=lambda: self.hold(pk, token),
                tick_s=job_heartbeat_seconds(),
            )
        except LimitExceeded as error:
            self.fail(pk, token, f"Nothing was stored. {error.message}", limit=error.limit)
            return
        refused = [{"source_name": a["source_name"], "reason": a["refused"]} for a in answers if "refused" in a]
        if refused:
            reasons = "; ".join(f"{item['source_name']}: {item['reason']}" for item in refused)
            self.fail(pk, token, f"Nothing was stored. {reasons}", limit="refused", rejected=refused)
            return
        self.hold(pk, token, stage=IngestJob.Stage.SAVING)
        sources = [PaperSource(**answer) for answer in answers]  # each {source_name, sha256, extraction}
        with transaction.atomic():
            results = [
                paper_store(project=job.project, actor=job.requested_by, source=source, batch=job.batch)
                for source in sources
            ]
            self.finish(  # inside the papers' transaction
                pk,
                token,
                stage=IngestJob.Stage.DONE,
                files_done=len(job.files),
                results=[result.as_dict() for result in results],
                limit="",
            )

    def after(self, job: IngestJob) -> None:
        if job.state == IngestJob.State.DONE:
            shutil.rmtree(ingest_job_folder(job), ignore_errors=True)


INGEST_JOBS = IngestJobs()


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
    return paper_store(project=project, actor=actor, source=PaperSource(**answer), batch=batch)

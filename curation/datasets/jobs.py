"""Big dataset imports off the request path: the web request checks the whole file and stores it; a worker of the
exports queue imports it with `dataset_import` (the one import of the page, the API and the command).

The heartbeat is renewed from a side thread while the import writes (its transaction never touches the job row, so
the beats and the progress the page polls are seen at once). The import is idempotent by the file's sha256, so a
worker that dies after the import committed but before it marked the job done leaves the next one only the mark."""

from __future__ import annotations

import hashlib
import logging
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from curation.datasets.models import ImportJob, ImportRecord
from curation.datasets.services import ImportResult, dataset_import, dataset_read, release_name_checked
from curation.errors import Conflict
from curation.jobs import JobKind, JobTakenOver, job_enqueue, job_heartbeating
from curation.models import Project
from curation.services.projects import require_role
from curation.states import Role

logger = logging.getLogger(__name__)

TASK_NAME = "curation.dataset_import"
FINISHED = (ImportJob.State.DONE, ImportJob.State.FAILED)


def import_job_file(job: ImportJob) -> Path:
    """Where the job's file waits (a name the server made up: nothing of the upload's name reaches the path)."""
    return Path(settings.MEDIA_ROOT) / "imports" / job.stored


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
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="import datasets")
    sha256 = hashlib.sha256(content).hexdigest()
    asked = {"project": project, "actor": actor, "format": format, "source_name": source_name, "content": content}
    if ImportRecord.objects.filter(project=project, format=format, source_sha256=sha256).exists():
        return dataset_import(**asked)
    waiting = ImportJob.objects.filter(project=project, format=format, source_sha256=sha256).exclude(state__in=FINISHED)
    if (job := waiting.first()) is not None:
        return job
    parsed = dataset_read(format=format, content=content)
    if as_release:
        release_name_checked(as_release)
    if len(parsed.questions) < settings.TATCURATE_DATASET_IMPORT_ASYNC_MIN_QUESTIONS:
        return dataset_import(**asked, as_release=as_release)
    job = ImportJob(
        project=project,
        format=format,
        source_name=source_name[:500],
        source_sha256=sha256,
        source_bytes=len(content),
        stored=f"{uuid.uuid4().hex}.{format}",
        as_release=as_release,
        questions_total=len(parsed.questions),
        requested_by=actor,
    )
    path = import_job_file(job)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.write_bytes(content)
        with transaction.atomic():
            job.save()
            job_enqueue(task_name=TASK_NAME, args=[job.pk])  # sent after commit
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return job


class DatasetImports(JobKind):
    """Dataset imports: a worker imports one queued file (the worker's side of `dataset_import_request`). The import
    rolls back whole when the claim is lost midway; a domain error (the requester is no longer a manager, a release
    of that name cannot be cut) fails the job with its message, and nothing is written."""

    name = "dataset imports"
    model = ImportJob
    task_name = TASK_NAME
    finished = FINISHED

    def load(self, pk: int) -> ImportJob | None:
        return ImportJob.objects.select_related("project", "requested_by").filter(pk=pk).first()

    def reset(self, row: ImportJob) -> dict[str, Any]:
        return {"questions_done": 0}

    def work(self, job: ImportJob, pk: int, token: str) -> None:
        done = [0]
        # The side thread's beats, on its own connection, carry the progress the page shows.
        with job_heartbeating(lambda: self.beat(pk, token, questions_done=done[0])) as lost:

            def progress(count: int) -> None:
                done[0] += count
                if lost.is_set():
                    raise JobTakenOver(pk)

            try:
                content = import_job_file(job).read_bytes()
            except FileNotFoundError:
                gone = "The stored file is gone (removed from the media folder); upload it again."
                self.fail(pk, token, gone)
                return
            try:
                record = dataset_import(
                    project=job.project,
                    actor=job.requested_by,
                    format=job.format,
                    source_name=job.source_name,
                    content=content,
                    as_release=job.as_release,
                    progress=progress,
                ).record
            except IntegrityError:  # a worker that held the claim before committed the same file meanwhile
                record = ImportRecord.objects.filter(
                    project=job.project, format=job.format, source_sha256=job.source_sha256
                ).first()
        self.finish(pk, token, record=record, questions_done=job.questions_total)

    def after(self, job: ImportJob) -> None:
        if job.state in FINISHED:
            import_job_file(job).unlink(missing_ok=True)

    def given_up(self, rows: list[ImportJob]) -> None:
        for job in rows:  # nothing of it was imported
            transaction.on_commit(lambda job=job: import_job_file(job).unlink(missing_ok=True))


DATASET_IMPORTS = DatasetImports()


def import_job_dismiss(*, job: ImportJob, actor: AbstractBaseUser | None) -> None:
    """Remove a failed job from the list (nothing of it was imported; its file is already gone). Managers only;
    a waiting, running or finished job cannot be dismissed."""
    require_role(user=actor, project=job.project, roles=(Role.MANAGER,), action="dismiss imports")
    deleted, _ = ImportJob.objects.filter(pk=job.pk, state=ImportJob.State.FAILED).delete()
    if not deleted:
        raise Conflict(
            f"The import of {job.source_name} is {job.get_state_display().lower()}; only a failed one is dismissed."
        )
    import_job_file(job).unlink(missing_ok=True)

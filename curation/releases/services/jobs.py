"""The jobs of the exports queue (curation/jobs.py kinds): release cuts and export builds, which share their states."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Q

from curation.exports.rows import ITEM_CHUNK
from curation.jobs import JobKind, JobTakenOver
from curation.releases.models import ExportArtifact, Release, ReleaseCut
from curation.releases.services.cut import release_cut


class ReleaseCuts(JobKind):
    """Release cuts: a worker runs one queued cut (the worker's side of `release_cut_request`), renewing its claim
    with each frozen chunk. The release and the cut's "ready" are written in one transaction, so a cut is released
    exactly once and a worker that lost its claim leaves nothing behind. A domain error (an instance changed
    meanwhile, the requester is no longer a manager) fails the cut with its message; any other error fails it too,
    and is raised for the worker's log and Celery's retry policy."""

    name = "release cuts"
    model = ReleaseCut
    task_name = "curation.release_cut"
    done = ReleaseCut.State.READY
    finished = (ReleaseCut.State.READY, ReleaseCut.State.FAILED)
    is_failed_on_error = True

    def load(self, pk: int) -> ReleaseCut | None:
        return ReleaseCut.objects.select_related("project", "requested_by").filter(pk=pk).first()

    def reset(self, row: ReleaseCut) -> dict[str, Any]:
        return {"items_done": 0}

    def work(self, cut: ReleaseCut, pk: int, token: str) -> None:
        done = 0

        def progress(count: int) -> None:
            nonlocal done
            done += count
            self.hold(pk, token, items_done=done)

        def mark_ready(release: Release) -> None:  # inside the release's transaction
            self.finish(pk, token, release=release, items_done=release.item_count)

        # Beats between the frozen chunks, and from a side thread through the release's long final write.
        with self.heartbeating(pk, token):
            release_cut(
                project=cut.project,
                actor=cut.requested_by,
                name=cut.name,
                progress=progress,
                before_commit=mark_ready,
                **cut.options,  # batch_ids and the cut's options
            )


RELEASE_CUTS = ReleaseCuts()


def _export_path(release: Release, fmt: str) -> Path:
    return Path("exports") / release.project.slug / f"{release.label}-{fmt}.zip"


def _export_absolute(artifact: ExportArtifact) -> Path:
    return Path(settings.MEDIA_ROOT) / _export_path(artifact.release, artifact.format)


class ExportBuilds(JobKind):
    """Export builds: a worker writes one export zip (idempotent: a ready artifact whose file exists is left alone).
    A waiting or failed build (or a ready one whose file is gone), or one whose writer went silent, is claimed; the
    zip is written beside its place and moved there only while the claim holds."""

    name = "export builds"
    model = ExportArtifact
    task_name = "curation.export_build"
    done = ExportArtifact.State.READY
    is_failed_on_error = True
    waiting = Q(state__in=(ExportArtifact.State.PENDING, ExportArtifact.State.FAILED, ExportArtifact.State.READY))
    finished = ()

    def load(self, pk: int) -> ExportArtifact | None:
        return ExportArtifact.objects.select_related("release__project").filter(pk=pk).first()

    def is_finished(self, artifact: ExportArtifact) -> bool:
        return artifact.state == ExportArtifact.State.READY and _export_absolute(artifact).is_file()

    def reset(self, artifact: ExportArtifact) -> dict[str, Any]:
        return {"items_done": 0, "items_total": artifact.release.item_count}

    def work(self, artifact: ExportArtifact, pk: int, token: str) -> None:
        from curation.exports import write_export_zip

        total = artifact.release.item_count
        done = 0

        def progress(count: int) -> None:
            nonlocal done
            done += count
            if done % ITEM_CHUNK == 0 or done == total:
                self.hold(pk, token, items_done=done)

        absolute = _export_absolute(artifact)
        absolute.parent.mkdir(parents=True, exist_ok=True)
        temporary = absolute.with_suffix(f".{token}.partial")
        try:
            # Beats every 1,000 items, and from a side thread however long one stretch of the writer takes.
            with self.heartbeating(pk, token):
                digest, size = write_export_zip(artifact.release, artifact.format, temporary, progress=progress)
            if not self.mine(pk, token).exists():
                raise JobTakenOver(pk)
            temporary.replace(absolute)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        path = str(_export_path(artifact.release, artifact.format))
        self.finish(pk, token, path=path, sha256=digest, size_bytes=size, items_done=total)


EXPORT_BUILDS = ExportBuilds()

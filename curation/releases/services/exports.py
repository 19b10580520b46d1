"""Exports of a release: the cached artifact of a format, built now (small releases) or on a worker (big ones)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from curation.errors import Conflict, InvalidInput, NotFound
from curation.jobs import job_enqueue
from curation.releases.models import ExportArtifact, Release
from curation.releases.services.jobs import EXPORT_BUILDS

# Releases up to this many items are exported inside the request; bigger ones go to a Celery worker.
SYNC_EXPORT_MAX_ITEMS = 5000


def export_request(*, release: Release, actor: AbstractBaseUser | None, format: str) -> ExportArtifact:
    """Get the cached export of `release` in `format`, building it now (small releases) or on a worker (big ones).
    Callers check that the actor may read gold answers."""
    from curation.exports import EXPORT_FORMATS

    if format not in EXPORT_FORMATS:
        raise InvalidInput(f"Unknown export format {format!r}; expected one of {', '.join(EXPORT_FORMATS)}.")
    with transaction.atomic():
        artifact, created = ExportArtifact.objects.get_or_create(
            release=release, format=format, defaults={"items_total": release.item_count, "requested_by": actor}
        )
        if not created:
            if artifact.state in (ExportArtifact.State.PENDING, ExportArtifact.State.RUNNING) or (
                artifact.state == ExportArtifact.State.READY and (Path(settings.MEDIA_ROOT) / artifact.path).is_file()
            ):
                return artifact
            # Failed, or ready with its file gone: built anew, the reaper counting its attempts afresh.
            ExportArtifact.objects.filter(pk=artifact.pk).update(
                state=ExportArtifact.State.PENDING, error="", items_done=0, attempts=0
            )
        if release.item_count > SYNC_EXPORT_MAX_ITEMS:
            job_enqueue(task_name="curation.export_build", args=[artifact.pk])  # sent after commit
            artifact.refresh_from_db()
            return artifact
    EXPORT_BUILDS.run(artifact.pk, worker="web")
    artifact.refresh_from_db()
    return artifact


def export_file(*, release: Release, format: str) -> Path:
    """The file of a ready export of `release` in `format`; NotFound before one is asked for, Conflict while it is
    still being built. Callers check that the viewer may read gold answers."""
    artifact = ExportArtifact.objects.filter(release=release, format=format).first()
    if artifact is None:
        raise NotFound(f"No {format} export yet; request one first.")
    if artifact.state != ExportArtifact.State.READY:
        raise Conflict(f"The {artifact.format} export is {artifact.get_state_display().lower()}; try again shortly.")
    absolute = Path(settings.MEDIA_ROOT) / artifact.path
    if not absolute.is_file():
        raise NotFound("The export file is missing; request the export again.")
    return absolute

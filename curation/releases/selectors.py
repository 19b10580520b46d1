"""Reads of releases and imports, scoped to the viewer; who may see gold answers is decided here only.

Releases (metadata and statistics) are readable by every member of the project. Gold answers (items and every
export, since each format carries answers) only by managers, verifiers and *qualified* annotators: an annotator
who has not passed the qualification exam must never see them, because the exam is drawn from gold data.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, QuerySet

from curation import selectors, visibility
from curation.datasets.models import ImportJob, ImportRecord
from curation.errors import NotFound, NotPermitted
from curation.figures_cache import project_figures
from curation.models import Instance, Project
from curation.releases.models import ExportArtifact, NearDuplicate, NearDuplicateCheck, Release, ReleaseCut
from curation.releases.withheld import withheld_counts
from curation.states import Role, Status


def can_read_gold(*, user: AbstractBaseUser, project: Project) -> bool:
    """Managers, verifiers and qualified annotators of the project (and operators): curation.visibility."""
    return visibility.can_read_gold(user=user, project_id=project.pk)


def releases_of(*, user: AbstractBaseUser, project: Project) -> QuerySet[Release]:
    """Releases of a project the user belongs to (project_get raises NotFound for outsiders)."""
    selectors.project_get(user=user, slug=project.slug)
    return Release.objects.visible_to(user).filter(project=project).select_related("created_by", "project")


def release_cuts_of(*, user: AbstractBaseUser, project: Project) -> QuerySet[ReleaseCut]:
    """Cuts on a worker that are waiting, running or failed (a ready one is its release): managers only."""
    selectors.project_get(user=user, slug=project.slug)
    if Role.MANAGER not in selectors.roles_of(user=user, project=project):
        return ReleaseCut.objects.none()
    return (
        ReleaseCut.objects.visible_to(user)
        .filter(project=project)
        .exclude(state=ReleaseCut.State.READY)
        .select_related("requested_by")
    )


def release_get(*, user: AbstractBaseUser, release_id: int, slug: str | None = None) -> Release:
    """One release of a project the user belongs to (the project `slug` names, on a page); anything else is 'not
    found'."""
    release = (
        Release.objects.visible_to(user)
        .filter(pk=release_id)
        .select_related("project", "created_by", "supersedes", "import_record")
        .first()
    )
    if release is None:
        raise NotFound(f"No release {release_id} that you may see.")
    if slug not in (None, release.project.slug):
        raise NotFound("No such release in this project.")
    return release


def release_gold_get(*, user: AbstractBaseUser, release_id: int, slug: str | None = None) -> Release:
    """A release whose gold answers the user may read; members without that right get NotPermitted."""
    release = release_get(user=user, release_id=release_id, slug=slug)
    if not can_read_gold(user=user, project=release.project):
        raise NotPermitted(
            "Gold answers are for managers, verifiers and qualified annotators; pass the qualification exam first."
        )
    return release


def exports_of(*, release: Release) -> dict[str, ExportArtifact]:
    """Export artifacts of a release by format (the caller has already checked the viewer)."""
    return {artifact.format: artifact for artifact in ExportArtifact.objects.filter(release=release)}


def imports_visible_to(*, user: AbstractBaseUser, project: Project) -> QuerySet[ImportRecord]:
    """Imports of a project: managers only."""
    selectors.managed_project_get(user=user, slug=project.slug, action="see its imports")
    return ImportRecord.objects.filter(project=project).select_related("created_by", "batch")


def import_jobs_visible_to(*, user: AbstractBaseUser, project: Project) -> QuerySet[ImportJob]:
    """Big imports on a worker that are waiting, running or failed (a done one is its import record): managers
    only, like the imports themselves."""
    imports_visible_to(user=user, project=project)  # the same refusal for anyone else
    return (
        ImportJob.objects.visible_to(user)
        .filter(project=project)
        .exclude(state=ImportJob.State.DONE)
        .select_related("requested_by")
    )


def import_job_get(*, user: AbstractBaseUser, job_id: int) -> ImportJob:
    """One import job of a project the user manages (done ones too: the API says what it became); NotFound else."""
    job = ImportJob.objects.visible_to(user).select_related("project", "record").filter(pk=job_id).first()
    if job is None or Role.MANAGER not in selectors.roles_of(user=user, project=job.project):
        raise NotFound("No such import job.")
    return job


def newer_release(*, user: AbstractBaseUser, release: Release) -> Release | None:
    """The latest later version of the same release name, if any (the release page points to it)."""
    return (
        Release.objects.visible_to(user)
        .filter(project=release.project, name=release.name, version__gt=release.version)
        .order_by("-version")
        .first()
    )


RECENT_BATCHES = 10  # batches the cut form offers as boxes to tick; any other is typed as a number or range


def batches_to_release(*, user: AbstractBaseUser, project: Project) -> dict[str, Any]:
    """What the cut form offers: how many validated instances wait in how many batches (the default, "every batch
    with validated instances") and the RECENT_BATCHES latest of those batches to tick, each with its count; the
    other batches are typed by number. The counts read every validated instance of the project, so they are
    whole-project figures, reused until an instance of the project changes (curation/figures_cache.py); which
    batches the viewer sees is read each time (their ids only, then a page of them)."""

    instances = Instance.objects.without_probes().filter(project=project, status=Status.VALIDATED)

    def validated_per_batch() -> dict[int, int]:
        counted = instances.filter(batch__isnull=False).order_by().values("batch_id").annotate(n=Count("id"))
        return dict(counted.values_list("batch_id", "n"))

    validated = project_figures(project, "validated_per_batch", validated_per_batch)
    waiting = selectors.batches_visible_to(user, project).filter(pk__in=list(validated))
    ids = list(waiting.values_list("pk", flat=True))
    recent = waiting.order_by("-order", "-id")[:RECENT_BATCHES]
    # Read each time (configuring the exam moves no instance, so the figures cache would not see it).
    withheld = withheld_counts(project=project, instances=instances.filter(batch_id__in=ids))
    return {
        "instances": sum(validated[pk] for pk in ids),
        "batches": len(ids),
        "recent": [{"batch": b, "validated": validated[b.pk]} for b in recent],
        "withheld": [{"reason": reason, "count": n} for reason, n in sorted(withheld.items())],
        "withheld_total": sum(withheld.values()),
    }


NEAR_DUPLICATES_SHOWN = 200


def near_duplicates_of(*, user: AbstractBaseUser, project: Project) -> dict[str, Any]:
    """Managers only: the last near-duplicate check and its findings among the validated instances (the ones a cut
    may still release), each with whether the viewer may open the other side (its project is one they see)."""
    if Role.MANAGER not in selectors.roles_of(user=user, project=project):
        raise NotPermitted("Only managers of this project see near-duplicates.")
    check = NearDuplicateCheck.objects.filter(project=project).first()
    findings = NearDuplicate.objects.filter(project=project, instance__status=Status.VALIDATED)
    seen = set(selectors.projects_visible_to(user).values_list("pk", flat=True))
    shown = list(findings.select_related("instance", "other_project")[:NEAR_DUPLICATES_SHOWN])
    for finding in shown:
        finding.other_is_visible = finding.other_id is not None and finding.other_project_id in seen
    return {
        "check": check,
        "findings": shown,
        "count": findings.count(),
        "withheld": findings.filter(is_withheld=True).count(),
    }

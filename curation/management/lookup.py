"""What a command names by its options (`--project SLUG`, `--batch NAME-OR-ID`, a release, an endpoint), found or
refused with the reason."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db.models import Q

from curation.endpoints.models import ModelEndpoint
from curation.models import Batch, Project
from curation.releases.models import Release


def project_named(slug: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"No project {slug!r}.")
    return project


def batch_named(project: Project, key: str | int) -> Batch:
    """The project's batch with this name, or with this id when the key is a number."""
    key = str(key)
    batch = Batch.objects.filter(project=project).filter(Q(pk=int(key)) if key.isdigit() else Q(name=key)).first()
    if batch is None:
        raise CommandError(f"Project {project.slug!r} has no batch {key!r}.")
    return batch


def release_named(project: Project, name: str, version: int | None = None) -> Release:
    """The project's release of this name: the given version, else the latest."""
    releases = Release.objects.filter(project=project, name=name).order_by("-version")
    release = (releases if version is None else releases.filter(version=version)).first()
    if release is None:
        raise CommandError(f"No release {name!r}{f' v{version}' if version else ''} in project {project.slug!r}.")
    return release


def release_keyed(project: Project, key: str) -> Release:
    """The project's release of `--release`: NAME (the latest version), its id, or NAME-vN. A name is tried first,
    so a release named like an id or a label (`2024`, `scitat-v2`) is still found by its name."""
    releases = Release.objects.filter(project=project)
    if releases.filter(name=key).exists():
        return release_named(project, key)
    if key.isdigit() and (release := releases.filter(pk=int(key)).first()):
        return release
    name, _, version = key.rpartition("-v")
    return release_named(project, name, int(version)) if name and version.isdigit() else release_named(project, key)


def endpoint_named(project: Project, name: str) -> ModelEndpoint:
    """The endpoint usable in the project with this name (or id); CommandError lists the known ones."""
    endpoints = ModelEndpoint.objects.usable_in(project)
    found = endpoints.filter(pk=int(name)).first() if name.isdigit() else endpoints.filter(name=name).first()
    if found is None:
        known = ", ".join(endpoints.values_list("name", flat=True)) or "none"
        raise CommandError(f"No endpoint {name!r} for project {project.slug!r} (known: {known}).")
    return found

"""What a command names by its options (`--project SLUG`, `--batch NAME-OR-ID`), found or refused with the reason."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db.models import Q

from curation.models import Batch, Project


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

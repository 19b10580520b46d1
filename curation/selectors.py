"""Reads a user sees, scoped to the viewer: what a person may not see is never returned."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, QuerySet

from curation import visibility
from curation.errors import NotFound
from curation.models import Batch, Instance, Paper, Project, ReasoningType
from curation.states import Status


def roles_of(*, user: AbstractBaseUser, project: Project) -> set[str]:
    """The roles `user` holds in `project` (an operator counts as manager everywhere: curation.visibility)."""
    return visibility.roles_in(user=user, project_id=project.pk)


def projects_visible_to(user: AbstractBaseUser) -> QuerySet[Project]:
    """Projects in which the user holds any role (every project for an operator)."""
    return Project.objects.visible_to(user)


def project_get(*, user: AbstractBaseUser, slug: str) -> Project:
    """A project the user belongs to; anything else is 'not found', so outsiders learn nothing."""
    project = projects_visible_to(user).filter(slug=slug).first()
    if project is None:
        raise NotFound(f"No project {slug!r} that you belong to.")
    return project


def instances_visible_to(user: AbstractBaseUser, project: Project | None = None) -> QuerySet[Instance]:
    """Managers and verifiers see a project's instances; annotators see what they wrote or review in round two."""
    qs = Instance.objects.visible_to(user).select_related("project", "reasoning_type", "batch")
    return qs.filter(project=project) if project is not None else qs


def with_output_relations(qs: QuerySet[Instance]) -> QuerySet[Instance]:
    """The joins the instance serializer needs, so serializing costs no query per field."""
    return qs.select_related(
        "project", "reasoning_type", "author", "round1_verifier", "round2_reviewer"
    ).prefetch_related("relevant_tables")


def instance_for_output(instance_id: int) -> Instance:
    """An instance loaded for serialization (the caller has already checked access)."""
    return with_output_relations(Instance.objects.filter(pk=instance_id)).get()


def instance_get(*, user: AbstractBaseUser, instance_id: int) -> Instance:
    instance = instances_visible_to(user).filter(pk=instance_id).first()
    if instance is None:
        raise NotFound(f"No instance {instance_id} that you may see.")
    return instance


def papers_visible_to(user: AbstractBaseUser, project: Project | None = None) -> QuerySet[Paper]:
    """Papers of projects where the user is a manager or verifier (annotators see contexts through their work)."""
    qs = Paper.objects.visible_to(user)
    return qs.filter(project=project) if project is not None else qs


def batches_visible_to(user: AbstractBaseUser, project: Project | None = None) -> QuerySet[Batch]:
    """Batches of the projects the user belongs to."""
    qs = Batch.objects.visible_to(user)
    return qs.filter(project=project) if project is not None else qs


def reasoning_types_of(*, user: AbstractBaseUser, project: Project) -> QuerySet[ReasoningType]:
    project_get(user=user, slug=project.slug)
    return ReasoningType.objects.filter(project=project).select_related("parent")


def status_counts(project: Project) -> dict[str, int]:
    """Instances per status, every status present (zeros included)."""
    counts = dict(
        Instance.objects.filter(project=project)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    return {status: counts.get(status, 0) for status in Status.values}

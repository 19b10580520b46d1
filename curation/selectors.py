"""Reads a user sees, scoped to the viewer: what a person may not see is never returned."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q, QuerySet

from curation import visibility
from curation.deadlines import deadline_state
from curation.errors import NotFound, NotPermitted
from curation.figures_cache import project_figures
from curation.models import Batch, Instance, Paper, Project, ReasoningType
from curation.panel.models import PANEL_HELD
from curation.states import Role, Status


def roles_of(*, user: AbstractBaseUser, project: Project) -> set[str]:
    """The roles `user` holds in `project` (an operator counts as manager everywhere: curation.visibility)."""
    return visibility.roles_in(user=user, project_id=project.pk)


def managed_project_get(*, user: AbstractBaseUser, slug: str, action: str) -> Project:
    """A project the user manages: outsiders learn nothing (404), other members are refused (403), told `action`
    ("Only a manager of this project may import datasets.")."""
    project = project_get(user=user, slug=slug)
    if Role.MANAGER not in roles_of(user=user, project=project):
        raise NotPermitted(f"Only a manager of this project may {action}.")
    return project


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
    visible = Instance.objects.visible_to(user, project_id=None if project is None else project.pk)
    return visible.select_related("project", "reasoning_type", "batch")


def with_output_relations(qs: QuerySet[Instance]) -> QuerySet[Instance]:
    """The joins the instance serializer needs, so serializing costs no query per field."""
    return qs.select_related(
        "project", "reasoning_type", "author", "round1_verifier", "round2_reviewer"
    ).prefetch_related("relevant_tables")


def instance_for_output(instance_id: int) -> Instance:
    """An instance loaded for serialization (the caller has already checked access)."""
    return with_output_relations(Instance.objects.filter(pk=instance_id)).get()


def instance_get(*, user: AbstractBaseUser, instance_id: int) -> Instance:
    """Instance #instance_id as the viewer may read it (NotFound unless they may see it)."""
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


def batch_deadlines(*, user: AbstractBaseUser, project: Project) -> list[dict[str, Any]]:
    """The project's open batches that have a deadline, overdue first, then the nearest (the work queue's list)."""
    batches = batches_visible_to(user, project).filter(state=Batch.State.OPEN, deadline_at__isnull=False)
    rows = [{"batch": batch, "deadline": deadline_state(batch)} for batch in batches]
    return sorted(rows, key=lambda row: row["deadline"].sort_key)


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


def claimable_drafts(*, project: Project, user: AbstractBaseUser) -> QuerySet[Instance]:
    """The drafts `user` could take from the queue: drafted, in an open batch, and assigned to nobody or to them.
    Counted on the project page and the work queue alike (the claim itself is the SQL in services/lifecycle.py)."""
    return (
        Instance.objects.filter(project=project, status=Status.DRAFTED, batch__state=Batch.State.OPEN)
        .filter(Q(assigned_to__isnull=True) | Q(assigned_to=user))
        .exclude(PANEL_HELD)
    )


def project_overview(*, user: AbstractBaseUser, project: Project, roles: set[str]) -> dict[str, dict[str, Any]]:
    """The figures the project page shows each role the viewer holds: their own work, their queues, the project's."""
    overview: dict[str, dict[str, Any]] = {}
    mine = instances_visible_to(user, project).filter(author=user)
    if Role.ANNOTATOR in roles:
        overview["annotator"] = {
            "in_progress": mine.filter(status=Status.IN_REFINEMENT).count(),
            "changes_requested": mine.filter(status=Status.CHANGES_REQUESTED).count(),
            "submitted": mine.exclude(
                status__in=(Status.IN_REFINEMENT, Status.CHANGES_REQUESTED, Status.DRAFTED)
            ).count(),
            "available": claimable_drafts(project=project, user=user).count(),
            "round2": project.instances.filter(status=Status.ROUND2_REVIEW)
            .exclude(author=user)
            .exclude(round1_verifier=user)
            .count(),
        }
    if Role.VERIFIER in roles:
        overview["verifier"] = {
            "waiting": project.instances.filter(status=Status.SUBMITTED).exclude(author=user).count(),
            "reviewing": project.instances.filter(status=Status.ROUND1_REVIEW, round1_verifier=user).count(),
            "discussions": project.instances.filter(status=Status.IN_DISCUSSION, round1_verifier=user).count(),
        }
    if Role.MANAGER in roles:
        counts = project_figures(project, "status_counts", lambda: status_counts(project))
        total = sum(counts.values())
        overview["manager"] = {
            "counts": [(Status(s).label, s, n, round(100 * n / (total or 1), 1)) for s, n in counts.items()],
            "total": total,
            "papers": papers_visible_to(user, project).count(),
            "batches": batches_visible_to(user, project),
        }
    return overview


def recent_instances(*, user: AbstractBaseUser, project: Project, roles: set[str]) -> QuerySet[Instance]:
    """The ten instances the project page lists: the latest changed for staff, the viewer's own for annotators."""
    visible = instances_visible_to(user, project)
    return visible.order_by("-updated_at")[:10] if roles & {Role.MANAGER, Role.VERIFIER} else visible[:10]


def instance_history_get(*, user: AbstractBaseUser, instance_id: int, project: Project | None = None) -> dict[str, Any]:
    """One instance the viewer may see (staff of its project, its author, its round-two reviewer), in `project` when
    given (NotFound otherwise), its context and people read in the same row, with its revisions and audit events."""
    people = ("author", "round1_verifier", "round2_reviewer")
    instance = (
        instances_visible_to(user, project)
        .select_related("context", "context__paper", "context__paragraph", *people)
        .filter(pk=instance_id)
        .first()
    )
    if instance is None:
        raise NotFound(f"No instance {instance_id} that you may see.")
    return {
        "instance": instance,
        "revisions": list(instance.revisions.select_related("author")),
        "events": list(instance.events.select_related("actor")),
    }


def batch_get(*, user: AbstractBaseUser, batch_id: int) -> Batch:
    """A batch the viewer may see (with its project), or NotFound: one answer for every door that takes a batch id."""
    batch = batches_visible_to(user).select_related("project").filter(pk=batch_id).first()
    if batch is None:
        raise NotFound(f"No batch {batch_id} that you may see.")
    return batch


def batch_of_project(*, user: AbstractBaseUser, project: Project, batch_id: int | None) -> Batch | None:
    """One batch of the project the viewer may see, or None (no id, or not one of the project's batches)."""
    if batch_id is None:
        return None
    return batches_visible_to(user, project).filter(pk=batch_id).first()

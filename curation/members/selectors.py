"""Reads of a project's members, for its managers only."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from curation import selectors
from curation.models import Membership, Project
from curation.services.projects import require_role
from curation.states import Role
from curation.visibility import QUALIFIED


def members_of(*, user: AbstractBaseUser, project: Project) -> QuerySet[Membership]:
    """Every membership of the project with its user and qualification; managers only (others get NotPermitted)."""
    selectors.project_get(user=user, slug=project.slug)
    require_role(user=user, project=project, roles=(Role.MANAGER,), action="see its members")
    return Membership.objects.filter(project=project).select_related("user").order_by("user__username", "role")


def qualified_annotators(*, project: Project | int) -> QuerySet[Membership]:
    """The project's qualified annotators with their users (who may claim drafts and review in round two): a read of
    the team, for a caller that has checked the viewer's role."""
    project_id = project if isinstance(project, int) else project.pk
    return Membership.objects.filter(QUALIFIED, project_id=project_id).select_related("user")


def is_qualified_annotator(*, project: Project | int, user: AbstractBaseUser | int) -> bool:
    """Whether `user` is a qualified annotator of `project` (QUALIFIED): the one test every check uses."""
    user_id = user if isinstance(user, int) else user.pk
    return qualified_annotators(project=project).filter(user_id=user_id).exists()


def memberships_of_user(*, user: AbstractBaseUser) -> QuerySet[Membership]:
    """The viewer's own memberships with their projects, by project name (the home page's list)."""
    return Membership.objects.filter(user_id=user.pk).select_related("project").order_by("project__name", "role")


def membership_get(*, user: AbstractBaseUser, project: Project, role: str) -> Membership | None:
    """The viewer's own membership in `project` with `role` (its qualification), or None."""
    return Membership.objects.filter(user_id=user.pk, project=project, role=role).first()

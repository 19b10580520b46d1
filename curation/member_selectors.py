"""Reads of a project's members, for its managers only."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from curation import selectors
from curation.models import Membership, Project
from curation.services.projects import require_role
from curation.states import Role


def members_of(*, user: AbstractBaseUser, project: Project) -> QuerySet[Membership]:
    """Every membership of the project with its user and qualification; managers only (others get NotPermitted)."""
    selectors.project_get(user=user, slug=project.slug)
    require_role(user=user, project=project, roles=(Role.MANAGER,), action="see its members")
    return Membership.objects.filter(project=project).select_related("user").order_by("user__username", "role")

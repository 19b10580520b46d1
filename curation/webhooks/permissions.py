"""Who may use webhooks: a project's managers (an operator counts as one), through every door."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from curation import selectors
from curation.models import Project
from curation.services.projects import require_role
from curation.states import Role


def managed_project(*, user: AbstractBaseUser, slug: str, action: str = "use its webhooks") -> Project:
    """The project `slug` for one of its managers; outsiders get NotFound, other members NotPermitted."""
    project = selectors.project_get(user=user, slug=slug)
    require_role(user=user, project=project, roles=(Role.MANAGER,), action=action)
    return project

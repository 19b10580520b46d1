"""Writes for a project's members: create a user with a one-time password, change a role, remove a member (managers
only; a project never loses its last manager). Adding an existing user is `curation.services.projects.membership_add`.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import transaction

from curation.errors import InvalidInput, NotFound
from curation.models import Membership, Project
from curation.services.projects import membership_add, require_role
from curation.services.unique import create_unique
from curation.states import Role


def _membership_of(*, project: Project, membership_id: int) -> Membership:
    membership = Membership.objects.select_related("user").filter(project=project, pk=membership_id).first()
    if membership is None:
        raise NotFound(f"No member {membership_id} in this project.")
    return membership


def last_manager_id(memberships: Iterable[Membership]) -> int | None:
    """The membership a project cannot lose: its manager when it has only one (None otherwise). `memberships`: the
    project's, or at least all of its managers'. The services refuse to remove it or change its role; the members
    page offers neither."""
    managers = [m.pk for m in memberships if m.role == Role.MANAGER]
    return managers[0] if len(managers) == 1 else None


def _refuse_losing_last_manager(membership: Membership) -> None:
    if membership.role != Role.MANAGER:
        return
    managers = Membership.objects.filter(project_id=membership.project_id, role=Role.MANAGER).only("pk", "role")
    if last_manager_id(managers) == membership.pk:
        raise InvalidInput("A project keeps at least one manager; make someone else manager first.")


@transaction.atomic
def member_create(
    *, project: Project, actor: AbstractBaseUser, username: str, role: str, email: str = ""
) -> tuple[Membership, str]:
    """Create a new user account with a generated initial password and give it `role`; the password is returned
    once (only its hash is stored). Managers only (the page's form and the API cap a username at 150 characters)."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="add members")
    username = username.strip()
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError as exc:
        message = f"{username!r} cannot be a username: {exc.messages[0]}"
        raise InvalidInput(message, detail={"field": "username"}) from exc
    User = get_user_model()
    password = secrets.token_urlsafe(12)
    create_unique(
        lambda: User.objects.create_user(username=username, email=email.strip(), password=password),
        taken=User.objects.filter(username__iexact=username).exists,
        field="username",
        message=f"A user called {username!r} exists already; add them by name instead.",
    )
    return membership_add(project=project, actor=actor, username=username, role=role), password


@transaction.atomic
def membership_set_role(*, project: Project, actor: AbstractBaseUser, membership_id: int, role: str) -> Membership:
    """Change a member's role (qualification is kept: it matters only for annotators). Managers only."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="change roles")
    membership = _membership_of(project=project, membership_id=membership_id)
    if membership.role == role:
        return membership
    if Membership.objects.filter(project=project, user_id=membership.user_id, role=role).exists():
        raise InvalidInput(f"{membership.user.username} is a {role} already.", detail={"field": "role"})
    _refuse_losing_last_manager(membership)
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def membership_remove(*, project: Project, actor: AbstractBaseUser, membership_id: int) -> None:
    """Take a role away from a member (their account and their past work stay). Managers only.

    A lease they hold runs out and the reaper returns the draft to the queue."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="remove members")
    membership = _membership_of(project=project, membership_id=membership_id)
    _refuse_losing_last_manager(membership)
    membership.delete()

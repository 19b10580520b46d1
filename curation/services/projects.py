"""Writes for projects and memberships: creating a project seeds its taxonomy; only managers change members."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from curation.errors import InvalidInput, NotFound, NotPermitted
from curation.models import Batch, Membership, Project, ReasoningType
from curation.services.unique import create_unique
from curation.states import Role
from curation.taxonomy import seed_taxonomy
from curation.visibility import can_create_projects, roles_in


def require_role(*, user: AbstractBaseUser | None, project: Project, roles: tuple[str, ...], action: str) -> None:
    """Raise NotPermitted unless `user` holds one of `roles` in `project` (an operator counts as a manager);
    `user=None` is an operator command, which may."""
    if user is not None and not roles_in(user=user, project_id=project.pk) & {str(role) for role in roles}:
        raise NotPermitted(f"Only a {' or '.join(roles)} of this project may {action}.")


def batch_managed(batch_id: int, actor: AbstractBaseUser | None, action: str) -> Batch:
    """The batch, once `actor` is known to manage its project (`actor=None` is an operator command)."""
    batch = Batch.objects.select_related("project").filter(pk=batch_id).first()
    if batch is None:
        raise NotFound(f"Batch {batch_id} does not exist.")
    require_role(user=actor, project=batch.project, roles=(Role.MANAGER,), action=action)
    return batch


@transaction.atomic
def project_create(*, name: str, creator: AbstractBaseUser | None, slug: str = "", description: str = "") -> Project:
    """Create a project with the default reasoning-type taxonomy; the creator becomes its manager.

    `creator=None` is an operator command; a person must pass `can_create_projects`."""
    if creator is not None and not can_create_projects(creator):
        raise NotPermitted("Only operators and project managers may create projects; ask one to add you instead.")
    name = name.strip()
    if not name:
        raise InvalidInput("A project needs a name.")
    slug = slugify(slug or name)[:80]
    if not slug:
        raise InvalidInput(f"Cannot make a slug from {name!r}; give one explicitly.")
    project = create_unique(
        lambda: Project.objects.create(name=name, slug=slug, description=description),
        taken=Project.objects.filter(slug=slug).exists,
        field="slug",
        message=f"A project with the slug {slug!r} exists already.",
    )
    seed_taxonomy(project, ReasoningType)
    if creator is not None:
        Membership.objects.create(user=creator, project=project, role=Role.MANAGER)
    return project


@transaction.atomic
def membership_add(
    *, project: Project, actor: AbstractBaseUser | None, username: str, role: str, is_qualified: bool = False
) -> Membership:
    """Give `username` a role in `project`; `actor=None` is an operator command. Managers only."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="add members")
    if role not in Role.values:
        raise InvalidInput(f"{role!r} is not a role; expected one of {', '.join(Role.values)}.")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise InvalidInput(f"There is no user called {username!r}.")
    membership, _ = Membership.objects.get_or_create(user=user, project=project, role=role)
    if is_qualified and not membership.is_qualified:
        membership.is_qualified = True
        membership.qualified_at = timezone.now()
        membership.save(update_fields=["is_qualified", "qualified_at"])
    return membership


@transaction.atomic
def reasoning_type_update(
    *, reasoning_type: ReasoningType, actor: AbstractBaseUser, **changes: object
) -> ReasoningType:
    """Edit a reasoning type's name, description or target share. Managers only."""
    require_role(user=actor, project=reasoning_type.project, roles=(Role.MANAGER,), action="edit the taxonomy")
    for name in ("name", "description", "target_proportion"):
        if name in changes:
            setattr(reasoning_type, name, changes[name])
    reasoning_type.save()
    return reasoning_type

"""Who sees what of a project, written once: the operator rule and the project-scoped queryset every selector uses.

Read the Docs' `RelatedProjectQuerySet` pattern: a model's queryset names the path to its project
(`project_field = "project"`, or `"run__project"`), and `.visible_to(user, roles=…)` keeps the rows of projects in
which the user holds one of `roles` (any role when None). Selectors start from it; nothing else filters
`Membership` to decide visibility (a test greps for that). `curation.models` imports these querysets, so this module
names the models it needs by label (`apps.get_model`) instead of importing them back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import models
from django.db.models import Q

from curation.states import Role

if TYPE_CHECKING:
    from django.db.models import QuerySet

Viewer = AbstractBaseUser | AnonymousUser


def is_operator(user: Viewer | None) -> bool:
    """The operator rule: a Django superuser acts as a manager of every project. Staff status alone grants nothing
    inside projects (it opens the Django admin and lets one create projects)."""
    return bool(user is not None and user.is_authenticated and getattr(user, "is_superuser", False))


def can_create_projects(user: Viewer | None) -> bool:
    """Operators, staff users and anyone who already manages a project may start projects on a shared server
    (the creator becomes its manager); annotators and verifiers may not, so a team server does not fill with
    everyone's test projects."""
    if user is None or not user.is_authenticated:
        return False
    if is_operator(user) or getattr(user, "is_staff", False):
        return True
    Membership = apps.get_model("curation", "Membership")

    return Membership.objects.filter(user=user, role=Role.MANAGER).exists()


def _role_values(roles: Iterable[str] | None) -> list[str] | None:
    return None if roles is None else [str(role) for role in roles]


def member_project_ids(user: Viewer, roles: Iterable[str] | None = None) -> QuerySet[Any]:
    """Ids of the projects where `user` holds one of `roles` (any role when None), as a subquery."""
    Membership = apps.get_model("curation", "Membership")

    memberships = Membership.objects.filter(user_id=user.pk)
    wanted = _role_values(roles)
    if wanted is not None:
        memberships = memberships.filter(role__in=wanted)
    return memberships.values("project_id")


def sees_every_project(user: Viewer, roles: Iterable[str] | None = None) -> bool:
    """Whether the operator rule lets `user` through for `roles`: operators count as managers everywhere."""
    wanted = _role_values(roles)
    return is_operator(user) and (wanted is None or Role.MANAGER.value in wanted)


def project_q(user: Viewer, roles: Iterable[str] | None = None, *, field: str = "project") -> Q:
    """The filter `field ∈ projects where user holds roles`, with the operator rule; matches nothing for anonymous."""
    if not user.is_authenticated:
        return Q(pk__in=[])
    if sees_every_project(user, roles):
        return Q(pk__isnull=False)  # matches every row, and unlike Q() survives `|` with another condition
    return Q(**{f"{field}__in": member_project_ids(user, roles)})


def roles_in(*, user: Viewer, project_id: int) -> set[str]:
    """The roles `user` holds in one project; an operator holds manager everywhere."""
    Membership = apps.get_model("curation", "Membership")

    if not user.is_authenticated:
        return set()
    roles = set(Membership.objects.filter(user_id=user.pk, project_id=project_id).values_list("role", flat=True))
    if is_operator(user):
        roles.add(Role.MANAGER.value)
    return roles


class ProjectScopedQuerySet(models.QuerySet):
    """A queryset of rows that belong to a project; `project_field` is the path from the row to its project."""

    project_field = "project"

    def project_q(self, user: Viewer, roles: Iterable[str] | None = None) -> Q:
        """This model's `project_q` (for combining with row rules, as instances do)."""
        return project_q(user, roles, field=self.project_field)

    def visible_to(self, user: Viewer, roles: Iterable[str] | None = None) -> ProjectScopedQuerySet:
        """Rows of projects where `user` holds one of `roles` (any role when None); operators see every project."""
        return self.filter(self.project_q(user, roles))


# Managers and verifiers read all of a project's curation data; annotators only what their work touches.
CURATORS = (Role.MANAGER, Role.VERIFIER)


class ProjectQuerySet(ProjectScopedQuerySet):
    """Projects: the user's own (any role), every project for an operator."""

    project_field = "pk"


class PaperQuerySet(ProjectScopedQuerySet):
    """Papers are for the project's managers and verifiers (annotators see contexts through their work)."""

    def visible_to(self, user: Viewer, roles: Iterable[str] | None = CURATORS) -> ProjectScopedQuerySet:
        """Papers of projects where the user is a manager or verifier (or holds `roles`)."""
        return super().visible_to(user, roles)


class InstanceQuerySet(ProjectScopedQuerySet):
    """Instances: curators see the project's; annotators what they wrote or review in round two."""

    def without_probes(self) -> InstanceQuerySet:
        """The one rule that keeps hidden-gold probes (ordinary instances marked in annotate.quality's manager-only
        table, reverse name `gold_probe`) out of what must not count them: release cuts and their statistics, gold
        for exams and probes, agreement draws, draft costs."""
        return self.filter(gold_probe__isnull=True)

    @staticmethod
    def own_q(user: Viewer) -> Q:
        """An annotator's own instances: those they wrote and those they review in round two."""
        return Q(author_id=user.pk) | Q(round2_reviewer_id=user.pk)

    def visible_to(
        self, user: Viewer, roles: Iterable[str] | None = None, *, project_id: int | None = None
    ) -> ProjectScopedQuerySet:
        """With `roles`, plain project scoping; without, the instance rule (curators all, annotators their own).

        With `project_id`, the same rule inside that project, the viewer's roles there read first: the whole project
        for a curator, their own instances for an annotator, nothing otherwise. Across projects the membership test
        is left to every row (an OR of subqueries, which no index serves: an annotator's list walked the project's
        instances to find theirs); inside one, an annotator's rows come from the indexes on author and reviewer."""
        if roles is not None or not user.is_authenticated:
            scoped = super().visible_to(user, roles)
            return scoped if project_id is None else scoped.filter(project_id=project_id)
        if project_id is None:
            own = self.own_q(user)
            return self.filter(self.project_q(user, CURATORS) | (self.project_q(user, (Role.ANNOTATOR,)) & own))
        held = roles_in(user=user, project_id=project_id)
        rows = self.filter(project_id=project_id)
        if held & {str(role) for role in CURATORS}:
            return rows
        if Role.ANNOTATOR.value in held:
            return rows.filter(self.own_q(user))
        return rows.none()


class ContextQuerySet(ProjectScopedQuerySet):
    """Contexts: curators see the project's; annotators the contexts of the instances they may see."""

    def visible_to(self, user: Viewer, roles: Iterable[str] | None = None) -> ProjectScopedQuerySet:
        """With `roles`, plain project scoping; without, the context rule."""
        Instance = apps.get_model("curation", "Instance")

        if roles is not None or not user.is_authenticated:
            return super().visible_to(user, roles)
        through_work = Instance.objects.visible_to(user).filter(context__isnull=False).values("context_id")
        return self.filter(self.project_q(user, CURATORS) | Q(pk__in=through_work))


class PredictionQuerySet(ProjectScopedQuerySet):
    """Predictions belong to a project through their run."""

    project_field = "run__project"


class DiscussionQuerySet(ProjectScopedQuerySet):
    """Round-two discussions belong to a project through their instance."""

    project_field = "instance__project"


class ModelEndpointQuerySet(ProjectScopedQuerySet):
    """Model endpoints: a project's own (`project` set) and global ones (`project` empty, usable by every project).

    The one answer to "who may see an endpoint", for drafting and scoring alike: those who pick one to run a model,
    the managers and verifiers (CURATORS) of the project that owns it; a global one, of some project (of `project`,
    when one is given); operators see them all. Who may *change* one is a service's check (drafting/endpoints.py)."""

    def usable_in(self, project: Any) -> ModelEndpointQuerySet:
        """The endpoints a project can draft or score with: its own and the global ones."""
        return self.filter(Q(project=project) | Q(project__isnull=True))

    def visible_to(
        self, user: Viewer, roles: Iterable[str] | None = CURATORS, *, project: Any = None
    ) -> ModelEndpointQuerySet:
        """Endpoints the user may see (see the class); with `project`, only those usable there."""
        if not user.is_authenticated:
            return self.none()
        if sees_every_project(user, roles):
            return self.usable_in(project) if project is not None else self
        held = member_project_ids(user, roles)
        if project is not None:
            return self.usable_in(project) if held.filter(project_id=project.pk).exists() else self.none()
        scope = Q(project__in=held)
        if held.exists():
            scope |= Q(project__isnull=True)
        return self.filter(scope)


# What "a qualified annotator" is, in one place: an annotator membership whose qualification stands, however it was
# given (the exam passed, a manager's vouch, a restore after a hidden-gold pause: each sets `is_qualified`).
# Read through `curation.members.selectors.is_qualified_annotator` / `qualified_annotators`; the claim's SQL in
# curation/services/lifecycle.py and the queue's one-query read in annotate/work/queue.py repeat it inline.
QUALIFIED = Q(role=Role.ANNOTATOR, is_qualified=True)


def can_read_gold(*, user: Viewer, project_id: int) -> bool:
    """Gold answers are for managers, verifiers and *qualified* annotators of the project (and operators): the exam
    is drawn from gold data, so an annotator who has not passed it never sees a gold answer."""
    Membership = apps.get_model("curation", "Membership")

    if not user.is_authenticated:
        return False
    if sees_every_project(user, CURATORS):
        return True
    memberships = Membership.objects.filter(user_id=user.pk, project_id=project_id)
    return memberships.filter(Q(role__in=[str(role) for role in CURATORS]) | QUALIFIED).exists()

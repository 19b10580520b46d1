"""Reads of the instance browser: a project's instances filtered and searched, scoped by `instances_visible_to`
(verifiers and managers see all of them, annotators their own and their round-two work)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from annotate.instances.filters import InstanceFilterSet
from curation import selectors
from curation.members.selectors import qualified_annotators
from curation.models import Batch, Membership, Paper, Project, ReasoningType
from curation.states import Role


def instances_filtered(
    *, user: AbstractBaseUser, project: Project, data: Mapping[str, Any] | None
) -> InstanceFilterSet:
    """The instances of `project` the user may see under the browser's filters (`InstanceFilterSet`, bound to `data`;
    unbound, nothing is filtered), newest first: the page and the API read its `qs` once `is_valid()`."""
    selectors.project_get(user=user, slug=project.slug)
    rows = selectors.instances_visible_to(user, project).select_related(
        "author", "assigned_to", "context__paper", "batch", "reasoning_type"
    )
    filters = InstanceFilterSet(data, queryset=rows.order_by("-id"))
    if Role.MANAGER not in selectors.roles_of(user=user, project=project):
        # The panel's verdicts are the manager's: an annotator who could sort their work by them could also tell
        # a hidden-gold probe (made after the calibration, without a verdict) from the drafts around it.
        del filters.filters["panel"]
    return filters


PAPER_CHOICES = 100


def browse_choices(
    *, user: AbstractBaseUser, project: Project, selected_paper: int | None = None
) -> dict[str, QuerySet | list]:
    """The values the browser's filters offer this viewer: batches, papers, reasoning types and annotators.

    Papers are those the viewer may see (staff: every paper, so a paper without questions can be batched;
    annotators: the papers of their own work): the PAPER_CHOICES newest, and `selected_paper` (a paper page's
    link to its instances) when the viewer may see it, by title; a page lists no more however large the project.
    Annotators are offered to staff only."""
    visible = selectors.instances_visible_to(user, project)
    papers = (
        Paper.objects.visible_to(user, roles=None)
        .filter(project=project)
        .filter(
            Q(pk__in=selectors.papers_visible_to(user, project).values("pk"))
            | Q(pk__in=visible.values("context__paper_id"))
        )
        .only("id", "title")
    )
    sees_team = bool(selectors.roles_of(user=user, project=project) & {Role.MANAGER, Role.VERIFIER})
    annotators = (
        get_user_model()
        .objects.filter(memberships__project=project, memberships__role=Role.ANNOTATOR)
        .order_by("username")
        .distinct()
        if sees_team
        else get_user_model().objects.none()
    )
    return {
        "batches": Batch.objects.visible_to(user).filter(project=project),
        "papers": sorted(
            {
                *papers.order_by("-created_at", "-pk")[:PAPER_CHOICES],
                *(papers.filter(pk=selected_paper) if selected_paper is not None else ()),
            },
            key=lambda paper: (paper.title, paper.pk),
        ),
        "reasoning_types": ReasoningType.objects.filter(project=project).select_related("parent"),
        "annotators": annotators,
        "qualified": (
            qualified_annotators(project=project).order_by("user__username") if sees_team else Membership.objects.none()
        ),
    }

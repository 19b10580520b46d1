"""Reads of papers and contexts scoped to the viewer: staff see a project's papers, annotators only their work."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Prefetch, Q, QuerySet

from curation.errors import NotFound
from curation.models import Context, Membership, Paper, Paragraph, Project, Table
from curation.selectors import instances_visible_to, papers_visible_to
from curation.services.papers import paper_flag_reason
from curation.states import Role


def papers_of_project(*, user: AbstractBaseUser, project: Project) -> list[Paper]:
    """A project's papers with table, paragraph and context counts and their flag, for managers and verifiers."""
    papers = list(
        papers_visible_to(user, project)
        .annotate(
            table_count=Count("tables", distinct=True),
            paragraph_count=Count("paragraphs", distinct=True),
            context_count=Count("contexts", distinct=True),
        )
        .order_by("-created_at", "-pk")
    )
    for paper in papers:
        paper.flag = paper_flag_reason(table_count=paper.table_count, origin=paper.origin)
    return papers


def paper_get(*, user: AbstractBaseUser, project: Project, paper_id: int) -> Paper:
    """One paper of the project with its tables and paragraphs (and their links), if the user may see it."""
    paper = (
        papers_visible_to(user, project)
        .prefetch_related(
            Prefetch("tables", queryset=Table.objects.order_by("order")),
            Prefetch(
                "paragraphs",
                queryset=Paragraph.objects.order_by("order").prefetch_related(
                    Prefetch("mentioned_tables", queryset=Table.objects.order_by("order"))
                ),
            ),
        )
        .filter(pk=paper_id)
        .first()
    )
    if paper is None:
        raise NotFound(f"No paper {paper_id} that you may see.")
    return paper


def contexts_visible_to(user: AbstractBaseUser, project: Project) -> QuerySet[Context]:
    """Managers and verifiers see all of a project's contexts; annotators only those of instances they may see."""
    if not user.is_authenticated:
        return Context.objects.none()
    qs = Context.objects.filter(project=project).select_related("paper", "reasoning_type", "batch", "paragraph")
    if user.is_superuser:
        return qs
    if Membership.objects.filter(user=user, project=project, role__in=(Role.MANAGER, Role.VERIFIER)).exists():
        return qs
    mine = instances_visible_to(user, project).filter(context__isnull=False).values("context_id")
    return qs.filter(Q(pk__in=mine))


def context_get(*, user: AbstractBaseUser, context_id: int) -> Context:
    """One context, if the user may see it; otherwise 'not found'."""
    context = Context.objects.select_related("project").filter(pk=context_id).first()
    if context is None or not contexts_visible_to(user, context.project).filter(pk=context_id).exists():
        raise NotFound(f"No context {context_id} that you may see.")
    return context


def context_counts(paper: Paper) -> dict[str, int]:
    """Contexts of a paper by kind, and how many have a reasoning type."""
    rows = Context.objects.filter(paper=paper).values_list("kind", "reasoning_type_id")
    counts = {"short": 0, "long": 0, "assigned": 0}
    for kind, reasoning_type_id in rows:
        counts[kind] = counts.get(kind, 0) + 1
        counts["assigned"] += reasoning_type_id is not None
    return counts

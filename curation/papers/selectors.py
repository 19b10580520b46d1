"""Reads of papers and contexts scoped to the viewer: staff see a project's papers, annotators only their work."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Page, Paginator
from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from curation.errors import NotFound
from curation.models import Context, Paper, Paragraph, Project, Table
from curation.pagination import capped_count
from curation.papers.models import IngestJob
from curation.papers.services import paper_flag_reason
from curation.selectors import papers_visible_to
from curation.states import Role

PAPERS_PER_PAGE = 50


def _count_of(model: type, field: str, **where: object) -> Coalesce:
    """How many `model` rows (those matching `where`) point at the outer paper, counted for the rows a page shows
    (not the whole project)."""
    rows = model.objects.filter(**{field: OuterRef("pk")}, **where).order_by().values(field).annotate(n=Count("pk"))
    return Coalesce(Subquery(rows.values("n")), 0)


def papers_of_project(*, user: AbstractBaseUser, project: Project, page: str | int | None = None) -> Page:
    """One page (PAPERS_PER_PAGE, newest first) of a project's papers with table, paragraph and context counts and
    their flag, for managers and verifiers."""
    papers = (
        papers_visible_to(user, project)
        .annotate(
            table_count=_count_of(Table, "paper"),
            paragraph_count=_count_of(Paragraph, "paper"),
            context_count=_count_of(Context, "paper"),
            short_context_count=_count_of(Context, "paper", kind=Context.Kind.SHORT),
        )
        .order_by("-created_at", "-pk")
    )
    chosen = Paginator(papers, PAPERS_PER_PAGE).get_page(page)
    for paper in chosen:
        paper.flag = paper_flag_reason(
            table_count=paper.table_count, short_context_count=paper.short_context_count, origin=paper.origin
        )
    return chosen


def paper_get(*, user: AbstractBaseUser, project: Project | None, paper_id: int) -> Paper:
    """One paper of the project (of any project when None) with its project, tables and paragraphs (and their
    links), if the user may see it."""
    paper = (
        papers_visible_to(user, project)
        .select_related("project")
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
    return (
        Context.objects.visible_to(user)
        .filter(project=project)
        .select_related("paper", "reasoning_type", "batch", "paragraph")
    )


def context_get(*, user: AbstractBaseUser, context_id: int) -> Context:
    """One context, if the user may see it; otherwise 'not found'."""
    context = Context.objects.visible_to(user).select_related("project").filter(pk=context_id).first()
    if context is None:
        raise NotFound(f"No context {context_id} that you may see.")
    return context


def context_counts(paper: Paper) -> dict[str, int]:
    """Contexts of a paper by kind, and how many have a reasoning type."""
    return Context.objects.filter(paper=paper).aggregate(
        short=Count("pk", filter=Q(kind=Context.Kind.SHORT)),
        long=Count("pk", filter=Q(kind=Context.Kind.LONG)),
        assigned=Count("reasoning_type"),
    )


def unassigned_context_count(*, user: AbstractBaseUser, project: Project) -> tuple[int, bool]:
    """Short contexts of the project still without a reasoning type (the papers page's call to assign them):
    counted up to 1,000, and whether there are more (`capped_count`)."""
    return capped_count(contexts_visible_to(user, project).filter(kind=Context.Kind.SHORT, reasoning_type__isnull=True))


def contexts_of_paper(*, user: AbstractBaseUser, paper: Paper) -> list[Context]:
    """A paper's contexts the viewer may see, short before long, in creation order."""
    return list(contexts_visible_to(user, paper.project).filter(paper=paper).order_by("kind", "pk"))


def short_contexts_of_paper(*, user: AbstractBaseUser, project: Project, paper_id: int) -> list[Context]:
    """The short contexts of one paper of the project (those a reasoning type is assigned to)."""
    return list(contexts_visible_to(user, project).filter(paper_id=paper_id, kind=Context.Kind.SHORT))


def papers_without_short_contexts(
    *, user: AbstractBaseUser, project: Project, shown: int = 5
) -> tuple[list[Paper], int]:
    """Ingested papers that cannot be drafted, having no short context (no tables, or no paragraph citing one): the
    newest `shown` and how many more, for the drafting page; each paper's own page says why (`paper_flag_reason`)."""
    papers = (
        papers_visible_to(user, project)
        .filter(origin="latex")
        .exclude(contexts__kind=Context.Kind.SHORT)
        .order_by("-created_at", "-pk")
    )
    first = list(papers[:shown])
    return first, (papers.count() - shown if len(first) == shown else 0)


def paper_versions(*, user: AbstractBaseUser, paper: Paper) -> QuerySet[Paper]:
    """Every ingested version of the same source (same origin and file name) as `paper`, oldest first."""
    if not paper.source_name:
        return papers_visible_to(user, paper.project).none().values("pk", "version")
    return (
        papers_visible_to(user, paper.project)
        .filter(origin=paper.origin, source_name=paper.source_name)
        .order_by("version")
        .values("pk", "version")
    )


def ingest_job_get(*, user: AbstractBaseUser, job_id: int, project: Project | None = None) -> IngestJob:
    """One ingestion job for a manager of its project (anyone else: NotFound, as if it did not exist)."""
    jobs = IngestJob.objects.visible_to(user, (Role.MANAGER,)).select_related("project", "requested_by", "batch")
    if project is not None:
        jobs = jobs.filter(project=project)
    job = jobs.filter(pk=job_id).first()
    if job is None:
        raise NotFound(f"No ingestion {job_id}.")
    return job


def ingest_jobs_open(*, user: AbstractBaseUser, project: Project) -> list[IngestJob]:
    """A manager's view of the project's ingestion jobs still waiting, running or failed (newest first)."""
    finished = (IngestJob.State.DONE, IngestJob.State.DISCARDED)
    jobs = IngestJob.objects.visible_to(user, (Role.MANAGER,)).filter(project=project).exclude(state__in=finished)
    return list(jobs.select_related("requested_by").order_by("-created_at", "-id")[:20])

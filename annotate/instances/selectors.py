"""Reads of the instance browser: a project's instances filtered and searched, scoped by `instances_visible_to`
(verifiers and managers see all of them, annotators their own and their round-two work)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet, TextField
from django.db.models.functions import Cast

from curation import selectors
from curation.members.selectors import qualified_annotators
from curation.models import Batch, Instance, Membership, Paper, Project, ReasoningType
from curation.stand_ins import WithStandIns, with_stand_ins
from curation.states import Role


@dataclass(frozen=True)
class InstanceFilters:
    """What the browser narrows by; empty values filter nothing. `batch=0` means "in no batch"."""

    status: str = ""
    batch: int | None = None
    paper: int | None = None
    reasoning_type: int | None = None
    annotator: str = ""
    text: str = ""

    def matches(self, instance: Instance) -> bool:
        """Whether one instance passes the filters: `instances_browse`'s filtering, for an instance not in the
        database (a stand-in, curation.stand_ins); tests hold the two to the same answers."""
        context = instance.context
        kind = instance.reasoning_type
        text = self.text.strip().lower()
        written = " ".join([instance.question, *map(str, instance.answer or []), instance.rationale]).lower()
        people = (getattr(instance.author, "username", None), getattr(instance.assigned_to, "username", None))
        return (
            (not self.status or instance.status == self.status)
            and (self.batch is None or instance.batch_id == (self.batch or None))
            and (self.paper is None or (context is not None and context.paper_id == self.paper))
            and (self.reasoning_type is None or (kind is not None and self.reasoning_type in (kind.pk, kind.parent_id)))
            and (not self.annotator or self.annotator in people)
            and (not text or text in written)
        )


def instances_browse(*, user: AbstractBaseUser, project: Project, filters: InstanceFilters) -> QuerySet[Instance]:
    """The instances of `project` the user may see that match `filters`, newest first.

    The text search looks in the question, the answer and the rationale (case-insensitive); the annotator is
    the author or the person a draft is assigned to."""
    selectors.project_get(user=user, slug=project.slug)
    qs = selectors.instances_visible_to(user, project).select_related(
        "author", "assigned_to", "context__paper", "batch", "reasoning_type"
    )
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.batch is not None:
        qs = qs.filter(batch__isnull=True) if filters.batch == 0 else qs.filter(batch_id=filters.batch)
    if filters.paper is not None:
        qs = qs.filter(context__paper_id=filters.paper)
    if filters.reasoning_type is not None:
        qs = qs.filter(
            Q(reasoning_type_id=filters.reasoning_type) | Q(reasoning_type__parent_id=filters.reasoning_type)
        )
    if filters.annotator:
        qs = qs.filter(Q(author__username=filters.annotator) | Q(assigned_to__username=filters.annotator))
    if filters.text.strip():
        qs = matching_text(qs, filters.text.strip())
    return qs.order_by("-id")


def instances_listed(
    *,
    user: AbstractBaseUser,
    project: Project,
    filters: InstanceFilters,
    rows: Callable[[QuerySet[Instance]], QuerySet[Instance]] = lambda instances: instances,
) -> QuerySet[Instance] | WithStandIns:
    """`instances_browse` as the browser and its API list it: with what the viewer works on under an instance's number
    (hidden gold in an annotator's hands) among the rows, where the instance it looks like would be. `rows` adds what
    the caller reads of each row (joins)."""
    return with_stand_ins(
        rows(instances_browse(user=user, project=project, filters=filters)),
        user=user,
        project_id=project.pk,
        keep=filters.matches,
        descending=True,
    )


def matching_text(instances: QuerySet[Instance], text: str) -> QuerySet[Instance]:
    """The instances whose question, answer or rationale holds `text`, in any case. On PostgreSQL the trigram
    indexes of migration 0019 cover exactly these expressions, so a search reads the rows that hold the text."""
    return instances.annotate(answer_text=Cast("answer", TextField())).filter(
        Q(question__icontains=text) | Q(answer_text__icontains=text) | Q(rationale__icontains=text)
    )


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

"""Reads of the qualification exam and the guidelines, scoped to the viewer; exam items never carry gold fields."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import OuterRef, QuerySet, Subquery

from annotate.qualification.models import (
    Guidelines,
    GuidelinesRead,
    QualificationAttempt,
    QualificationItem,
    QualificationSettings,
)
from annotate.qualification.services import attempts_close_expired, retry_at, settings_of
from curation.errors import NotFound, NotPermitted
from curation.models import Instance, Membership, Paragraph, Project
from curation.selectors import projects_visible_to, roles_of
from curation.states import Role

# The only Instance fields an exam item is built from: nothing here can hold the answer.
EXAM_ITEM_FIELDS = ("id", "question", "context")


# Why a release cut leaves the exam's gold out (said on the releases page and in the release's notes): published,
# these answers would reach every future candidate before their exam.
EXAM_POOL_WITHHELD = "in the qualification exam's gold pool"


def exam_pool_instance_ids(project: Project) -> QuerySet:
    """The ids of the instances in the project's exam gold pool, as a subquery (what release cuts withhold)."""
    return QualificationItem.objects.filter(settings__project=project).values("instance_id")


def gold_items_shown(item_ids: list[int]) -> list[dict[str, Any]]:
    """Gold instances as an exam shows them, in the given order: question and context
    only (EXAM_ITEM_FIELDS), never an answer, rationale or relevant table."""
    by_id = (
        Instance.objects.only(*EXAM_ITEM_FIELDS)
        .select_related("context__paper", "context__paragraph")
        .prefetch_related("context__tables", "excluded_tables", "excluded_paragraphs")
        .in_bulk(item_ids)
    )
    long_paper_ids = {i.context.paper_id for i in by_id.values() if i.context and i.context.paragraph_id is None}
    long_paragraphs: dict[int, list[Paragraph]] = {}
    for paragraph in Paragraph.objects.filter(paper_id__in=long_paper_ids).order_by("paper_id", "order"):
        long_paragraphs.setdefault(paragraph.paper_id, []).append(paragraph)
    items = []
    for order, pk in enumerate(item_ids):
        instance = by_id.get(pk)
        if instance is None:
            continue
        context = instance.context
        excluded_tables = {table.pk for table in instance.excluded_tables.all()}
        excluded_paragraphs = {paragraph.pk for paragraph in instance.excluded_paragraphs.all()}
        if context is None:
            paragraphs, tables, paper_title = [], [], ""
        else:
            paragraphs = [context.paragraph] if context.paragraph_id else long_paragraphs.get(context.paper_id, [])
            tables = sorted(context.tables.all(), key=lambda table: table.order)
            paper_title = context.paper.title
        items.append(
            {
                "instance_id": pk,
                "order": order,
                "number": order + 1,
                "question": instance.question,
                "paper_title": paper_title,
                "paragraphs": [p for p in paragraphs if p is not None and p.pk not in excluded_paragraphs],
                "tables": [t for t in tables if t.pk not in excluded_tables],
            }
        )
    return items


def attempt_get(*, user: AbstractBaseUser, attempt_id: int) -> QualificationAttempt:
    """The candidate's own attempt, or any attempt of a project the viewer manages; anything else is not found."""
    if not user.is_authenticated:
        raise NotFound(f"No exam attempt {attempt_id}.")
    attempt = QualificationAttempt.objects.select_related("project", "user").filter(pk=attempt_id).first()
    if attempt is None or (
        attempt.user_id != user.pk and Role.MANAGER not in roles_of(user=user, project=attempt.project)
    ):
        raise NotFound(f"No exam attempt {attempt_id} that you may see.")
    return attempt


def attempts_visible_to(*, user: AbstractBaseUser, project: Project) -> QuerySet[QualificationAttempt]:
    """Managers see every attempt of the project, annotators their own; other roles none. Open attempts whose time
    ran out are closed first, so a reader never sees one as open."""
    roles = roles_of(user=user, project=project)
    attempts = QualificationAttempt.objects.filter(project=project).select_related("user").order_by("-started_at")
    if Role.MANAGER not in roles:
        if Role.ANNOTATOR not in roles:
            raise NotPermitted("Only annotators (their own) and managers see exam attempts.")
        attempts = attempts.filter(user=user)
    attempts_close_expired(attempts=attempts.filter(submitted_at=None))
    return attempts


def exam_settings_get(*, user: AbstractBaseUser, project: Project) -> QualificationSettings:
    """The exam settings of a project the viewer belongs to (item answers are for managers; see the serializers)."""
    if not roles_of(user=user, project=project):
        raise NotFound("No such project that you belong to.")
    return settings_of(project)


def candidate_status(*, user: AbstractBaseUser, project: Project) -> dict[str, Any]:
    """What the exam page tells a candidate: qualified?, the open attempt, past attempts, when a retry is allowed
    (an open attempt whose time ran out is closed first, and may have qualified them)."""
    attempts = QualificationAttempt.objects.filter(project=project, user=user).order_by("-started_at")
    attempts_close_expired(attempts=attempts.filter(submitted_at=None))
    attempts = list(attempts)
    membership = Membership.objects.filter(user=user, project=project, role=Role.ANNOTATOR).first()
    exam = settings_of(project)
    pool = exam.item_links.count() if exam.pk else 0
    return {
        "membership": membership,
        "exam": exam,
        # What one attempt holds: `size` items drawn from the pool (never more than the pool has).
        "item_count": min(exam.size, pool),
        "pool_count": pool,
        "open_attempt": next((a for a in attempts if a.submitted_at is None), None),
        "past_attempts": [a for a in attempts if a.submitted_at is not None],
        "retry_at": retry_at(project=project, user=user, exam=exam) if membership else None,
    }


def qualification_summary(*, project: Project) -> dict[int, dict[str, Any]]:
    """Per annotator id with a submitted attempt: attempts, best and latest exam EM (of the scored ones; None before
    one), passed — for the exam's set-up page and the manager's dashboard."""
    summary: dict[int, dict[str, Any]] = {}
    for attempt in QualificationAttempt.objects.filter(project=project, submitted_at__isnull=False).order_by(
        "submitted_at"
    ):
        entry = summary.setdefault(attempt.user_id, {"attempts": 0, "best": None, "latest": None, "passed": False})
        entry["attempts"] += 1
        if attempt.score is not None:
            entry["best"] = max(entry["best"] or 0.0, attempt.score)
            entry["latest"] = attempt.score
        entry["passed"] = entry["passed"] or bool(attempt.passed)
    return summary


def guidelines_versions(*, user: AbstractBaseUser, project: Project) -> QuerySet[Guidelines]:
    """Every version of a project's guidelines, newest first, for its members."""
    if not roles_of(user=user, project=project):
        raise NotFound("No such project that you belong to.")
    return Guidelines.objects.filter(project=project).select_related("created_by").order_by("-version")


# Who must read a project's guidelines: the people who write and review its questions. A manager publishes them and
# an operator looks after the machine; neither is flagged (both may still open the page and read it).
GUIDELINES_READERS = (Role.ANNOTATOR, Role.VERIFIER)


def unread_guidelines(user: AbstractBaseUser) -> list[Project]:
    """Projects where the viewer must read the guidelines (GUIDELINES_READERS) and has not read the newest version."""
    if not getattr(user, "is_authenticated", False):
        return []
    newest = Guidelines.objects.filter(project=OuterRef("pk")).order_by("-version")
    read_ids = GuidelinesRead.objects.filter(user=user).values("guidelines_id")
    readers = Membership.objects.filter(user=user, role__in=GUIDELINES_READERS).values("project_id")
    return list(
        projects_visible_to(user)
        .filter(pk__in=readers)
        .annotate(
            guidelines_id=Subquery(newest.values("pk")[:1]), guidelines_version=Subquery(newest.values("version")[:1])
        )
        .filter(guidelines_id__isnull=False)
        .exclude(guidelines_id__in=read_ids)
        .only("slug", "name")
    )


def annotators_with_exam_summary(*, project: Project) -> list[tuple[Membership, dict[str, Any] | None]]:
    """Each annotator of the project beside their exam summary (None before any attempt), for its managers."""
    summary = qualification_summary(project=project)
    annotators = Membership.objects.filter(project=project, role=Role.ANNOTATOR).select_related("user")
    return [(membership, summary.get(membership.user_id)) for membership in annotators]

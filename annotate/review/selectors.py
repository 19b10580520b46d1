"""Reads for the review pages, scoped to the viewer: queues, the review view, history with revision diffs, threads."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import Count, Q, QuerySet

from annotate.agreement.selectors import double_for_review
from annotate.diffing import field_text, word_diff
from annotate.review.models import Discussion, ReviewComment
from annotate.review.services import (
    ROUND1_ORDER,
    ROUND2_BARRED_AT_MOST,
    discussion_participant,
    may_take_discussion,
    review_candidates,
    round2_candidates,
    round2_open_to,
)
from annotate.work.selectors import draft_diffs, instance_context
from curation.errors import NotFound
from curation.members.selectors import qualified_annotators
from curation.models import Context, Instance, InstanceRevision, Paper, Project
from curation.pagination import capped_count
from curation.selectors import instance_history_get, instances_visible_to, papers_visible_to, roles_of
from curation.services.instances import may_edit_now, revision_fields, revision_restorable
from curation.states import Role, Status

# What a revision diff compares, in the order a reader scans an instance, with the names the pages give them.
DIFF_FIELDS = {
    "question": "Question",
    "rationale": "Rationale",
    "answer": "Answer",
    "answer_form": "Answer form",
    "answer_type": "Answer type",
    "scale": "Scale",
    "answer_source": "Answer source",
    "relevant_table_ids": "Relevant tables (ids)",
}


def comments_of(instance: Instance) -> QuerySet[ReviewComment]:
    return ReviewComment.objects.filter(instance_id=instance.pk).select_related("author", "resolved_by")


def mark_changed_fields(revisions: list[InstanceRevision]) -> None:
    """Set on each revision (oldest first) the labels of the fields it changed (`changed_fields`), so a list of the
    same question still tells its revisions apart."""
    for earlier, revision in zip([None, *revisions], revisions, strict=False):
        revision.changed_fields = [
            label
            for name, label in DIFF_FIELDS.items()
            if earlier and revision.fields.get(name) != earlier.fields.get(name)
        ]


def review_data(*, user: AbstractBaseUser, instance_id: int, project: Project) -> dict[str, Any]:
    """Everything a review page shows: instance, context, draft diff, comments, revisions, timeline, discussions."""
    record = instance_history_get(user=user, instance_id=instance_id, project=project)
    instance = record["instance"]
    mark_changed_fields(record["revisions"])  # the page lists the revisions as the history page does
    return {
        **record,
        **instance_context(instance),
        "diffs": draft_diffs(instance),
        "comments": list(comments_of(instance)),
        "discussions": list(Discussion.objects.filter(instance_id=instance.pk).prefetch_related("messages__author")),
        "can_round1": instance.status == Status.ROUND1_REVIEW and instance.round1_verifier_id == user.pk,
        "double": double_for_review(user=user, instance=instance),
        "can_round2": instance.status == Status.ROUND2_REVIEW and instance.round2_reviewer_id == user.pk,
    }


def revision_diff(*, before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """Field-by-field word diff between two revisions' stored fields."""
    rows = []
    for name, label in DIFF_FIELDS.items():
        a, b = field_text(name, before.get(name, "")), field_text(name, after.get(name, ""))
        rows.append({"field": name, "label": label, "changed": a != b, "parts": word_diff(a, b)})
    return rows


def history_data(
    *,
    user: AbstractBaseUser,
    instance_id: int,
    project: Project | None = None,
    first: str | None = None,
    second: str | None = None,
    restore: str | None = None,
) -> dict[str, Any]:
    """An instance as it stands (its fields, its context and tables), its revisions, transitions and a diff between
    two of its revisions (default: the last two); for whoever may edit it now (`may_edit_now`), `can_restore`, and
    with `restore` the revision offered for restoring with what restoring it would change (`restore_diff`: now → that
    revision)."""
    record = instance_history_get(user=user, instance_id=instance_id, project=project)
    instance, revisions = record["instance"], record["revisions"]
    mark_changed_fields(revisions)
    can_restore = may_edit_now(instance=instance, user=user)
    by_number = {str(r.number): r for r in revisions}  # as a query string names them
    offered = by_number.get(restore) if can_restore else None
    # Default: the last two revisions (the only one, twice, when there is one).
    chosen = (
        (by_number.get(first, revisions[max(len(revisions) - 2, 0)]), by_number.get(second, revisions[-1]))
        if revisions
        else None
    )
    return {
        **record,
        **instance_context(instance),
        "pair": chosen,
        "diff": revision_diff(before=chosen[0].fields, after=chosen[1].fields) if chosen else None,
        "comments": list(comments_of(instance)),
        "is_manager": Role.MANAGER in roles_of(user=user, project=instance.project),
        "can_restore": can_restore,
        "restore_offered": offered,
        "restore_diff": revision_diff(before=revision_fields(instance), after=revision_restorable(offered))
        if offered
        else None,
    }


def review_queue(*, project: Project, user: AbstractBaseUser) -> dict[str, Any]:
    """A verifier's round-one pile: what they hold, what returns to them, and what waits (counted up to 1,000,
    `waiting_capped` when there are more)."""
    candidates = review_candidates(project=project, user=user).select_related("author", "reasoning_type")
    # What returns to this verifier is counted there, not again among what waits for anyone.
    waiting = candidates.filter(round1_verifier__isnull=True)
    waiting_count, waiting_capped = capped_count(waiting)
    return {
        "held": list(
            Instance.objects.visible_to(user)
            .filter(project=project, status=Status.ROUND1_REVIEW, round1_verifier=user)
            .select_related("author")
        ),
        "returning": list(candidates.filter(round1_verifier=user).order_by(*ROUND1_ORDER)),
        "waiting": list(waiting.order_by(*ROUND1_ORDER)[:50]),
        "waiting_count": waiting_count,
        "waiting_capped": waiting_capped,
        "discussions": list(discussions_visible_to(user, project, open_only=True).select_related("instance")),
    }


def round2_queue(*, project: Project, user: AbstractBaseUser) -> dict[str, Any]:
    """An annotator's round-two pile: what they hold and how many they may take (counted up to 1,000,
    `available_capped` when there are more)."""
    available, available_capped = capped_count(
        round2_candidates(project=project, user=user).filter(round2_reviewer__isnull=True)
    )
    return {
        "held": list(
            Instance.objects.visible_to(user).filter(project=project, status=Status.ROUND2_REVIEW, round2_reviewer=user)
        ),
        "available": available,
        "available_capped": available_capped,
        "discussions": list(discussions_visible_to(user, project, open_only=True).select_related("instance")),
    }


# How many stranded instances the manager is shown by number (the count is exact).
STRANDED_SHOWN = 20


def round2_stranded(*, user: AbstractBaseUser, project: Project) -> dict[str, Any]:
    """Round-two instances no qualified annotator of the project may review (each barred by `round2_barred_q`:
    a merged pair in a project of two annotators, or an author whose only colleague verified it or is not qualified
    yet). Nothing moves them but another qualified annotator, so the manager is told: `count`, the first
    `STRANDED_SHOWN` ids, and `qualified`, how many qualified annotators the project has. With more qualified
    annotators than round two ever bars from one instance, none can be stranded and nothing is read. For the
    dashboard, whose doors check the manager; the instances are read as `user` may see them."""
    qualified = list(qualified_annotators(project=project))
    if len(qualified) > ROUND2_BARRED_AT_MOST:
        return {"count": 0, "ids": [], "qualified": len(qualified)}
    stranded = Instance.objects.visible_to(user, project_id=project.pk).filter(status=Status.ROUND2_REVIEW)
    for membership in qualified:
        stranded = stranded.exclude(pk__in=round2_open_to(project=project, user=membership.user).values("pk"))
    ids = list(stranded.order_by("id").values_list("pk", flat=True))
    return {"count": len(ids), "ids": ids[:STRANDED_SHOWN], "qualified": len(qualified)}


def discussions_visible_to(
    user: AbstractBaseUser, project: Project | None = None, *, open_only: bool = False
) -> QuerySet[Discussion]:
    """Threads the viewer is involved in (reviewer, verifier, the instance's author); managers see their projects'.
    `open_only` keeps the undecided ones, inside each door (so a door reads its open threads, not all it ever had)."""
    if not user.is_authenticated:
        return Discussion.objects.none()
    threads = Discussion.objects.order_by()
    if project is not None:
        threads = threads.filter(instance__project=project)
    if open_only:
        threads = threads.filter(outcome="")
    # The doors united, each its own subquery: one OR across the thread's and its instance's columns makes
    # PostgreSQL read every instance of the table, where each door alone reads threads and instances by key.
    doors = [threads.filter(door).values("pk") for door in _discussion_doors(user)]
    return Discussion.objects.select_related("instance", "opened_by", "verifier", "decided_by").filter(
        pk__in=doors[0].union(*doors[1:])
    )


def _discussion_doors(user: AbstractBaseUser) -> list[Q]:
    """Each way a viewer is involved in a thread (reviewer or verifier, the instance's author, a manager of its
    project): `discussions_visible_to` admits any of them."""
    return [
        Q(opened_by=user) | Q(verifier=user),
        Q(instance__author=user),
        Discussion.objects.project_q(user, (Role.MANAGER,)),
        Q(verifier__isnull=True, outcome="") & Discussion.objects.project_q(user, (Role.VERIFIER,)),  # given back
    ]


def rounds_overview(*, user: AbstractBaseUser, project: Project) -> dict[str, tuple[int, bool]]:
    """How many of the project's instances the user may see are in round one and in round two (each counted up to
    COUNT_UP_TO, and whether there are more), for a manager's view of the reviews."""
    in_project = instances_visible_to(user).filter(project=project)
    return {
        "round1": capped_count(in_project.filter(status__in=(Status.SUBMITTED, Status.ROUND1_REVIEW))),
        "round2": capped_count(in_project.filter(status__in=(Status.ROUND2_REVIEW, Status.IN_DISCUSSION))),
    }


def discussion_get(*, user: AbstractBaseUser, discussion_id: int, project: Project | None = None) -> Discussion:
    """A thread the user may see (in `project` when given); NotFound otherwise."""
    discussion = discussions_visible_to(user, project).filter(pk=discussion_id).first()
    if discussion is None:
        raise NotFound(f"No discussion {discussion_id} that you may see.")
    return discussion


def discussion_data(*, user: AbstractBaseUser, discussion_id: int, project: Project) -> dict[str, Any]:
    """A thread with its messages and the instance it is about (with its context, comments and diffs, as its page
    shows it); who may reply and who may decide."""
    discussion = discussion_get(user=user, discussion_id=discussion_id, project=project)
    instance = discussion.instance
    return {
        "discussion": discussion,
        "thread_messages": list(discussion.messages.select_related("author")),
        "instance": instance,
        **instance_context(instance),
        "comments": [c for c in comments_of(instance) if c.round == 2],
        "diffs": draft_diffs(instance),
        "can_reply": discussion.is_open and discussion_participant(discussion=discussion, user=user),
        "can_decide": discussion.is_open
        and discussion.verifier_id == user.pk
        and instance.status == Status.IN_DISCUSSION,
        "can_take": discussion.is_open and discussion.verifier_id is None and may_take_discussion(discussion, user),
    }


BADGE_UP_TO = 99  # the badge says "99+" past this many open threads


def unresolved_discussion_count(user: AbstractBaseUser) -> int:
    """Open threads the viewer is involved in, for the badges on their pages, counted up to BADGE_UP_TO + 1 (the
    badge shows "99+" then): every page shows it, and a manager's door holds every open thread of their projects,
    so an exact count would grow with the project. Each door reads at most BADGE_UP_TO + 1 of its open threads;
    the count is exact below the cap (a door that stops at the cap has more than BADGE_UP_TO by itself)."""
    if not user.is_authenticated:
        return 0
    threads = Discussion.objects.order_by().filter(outcome="")
    doors = [threads.filter(door).values("pk")[: BADGE_UP_TO + 1] for door in _discussion_doors(user)]
    if connection.features.supports_slicing_ordering_in_compound:  # PostgreSQL: the doors united in one query
        counted = doors[0].union(*doors[1:]).count()
    else:  # SQLite takes no LIMIT inside a UNION: a query per door, united here
        counted = len({row["pk"] for door in doors for row in door})
    return min(counted, BADGE_UP_TO + 1)


FILL_PAPERS_PER_PAGE = 50


def papers_with_unbatched_contexts(
    *, user: AbstractBaseUser, project: Project, offset: int = 0, limit: int = FILL_PAPERS_PER_PAGE
) -> tuple[list[Paper], bool]:
    """One page of the project's papers that still have short contexts without a batch, in id order, each with that
    count (`free_contexts`), and whether more follow: the batch page's "fill from papers" form. A page reads its own
    papers only (no count of the whole project), however many papers the project has. Staff of the project only
    (others get an empty page)."""
    free = Q(contexts__kind=Context.Kind.SHORT, contexts__batch__isnull=True)
    visible = papers_visible_to(user, project)
    window = list(
        visible.filter(free).distinct().order_by("pk").values_list("pk", flat=True)[offset : offset + limit + 1]
    )
    papers = visible.filter(pk__in=window[:limit]).annotate(free_contexts=Count("contexts", filter=free)).order_by("pk")
    return list(papers), len(window) > limit


def unbatched_work(*, user: AbstractBaseUser, project: Project, limit: int = 200) -> dict[str, Any]:
    """Drafts and contexts of the project in no batch yet (the batch page's "put into a batch" lists), staff only."""
    drafts = (
        instances_visible_to(user, project)
        .filter(batch__isnull=True, status=Status.DRAFTED)
        .select_related("reasoning_type", "context__paper")
        .order_by("id")
    )
    # In id order (the order they were made in): the model's ordering sorts by paper title, which sorts every
    # context in no batch to show the first `limit`.
    contexts = Context.objects.visible_to(user).filter(project=project, batch__isnull=True)
    contexts = contexts.select_related("paper").order_by("id")
    return {"unbatched": drafts[:limit], "contexts": contexts[:limit]}

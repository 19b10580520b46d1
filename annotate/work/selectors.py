"""Reads for the annotation pages, scoped to the viewer; the workspace's query count does not grow with the paper."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Paginator
from django.db.models import Count, Min, OuterRef, Prefetch, Q, Subquery, prefetch_related_objects

from annotate.diffing import answer_text, word_diff
from annotate.work.workspace import held, instance_held, submission_problems, suggested_answer_kind
from curation.answer_types import ANSWER_TYPE_LABELS, SCALE_FORM_CHOICES, scale_for_form
from curation.errors import InvalidInput
from curation.models import Context, Instance, Paragraph, Project, ReasoningType, Table
from curation.states import Status
from curation.toolkit.answer_form import answer_form


def draft_diffs(instance: Instance) -> dict[str, list[tuple[str, str]]]:
    """Word-level diffs of question, rationale and answer between the draft and the current text."""
    draft = instance.draft or {}
    return {
        "question": word_diff(draft.get("question", ""), instance.question),
        "rationale": word_diff(draft.get("rationale", ""), instance.rationale),
        "answer": word_diff(answer_text(draft.get("answer", []) or []), answer_text(instance.answer)),
    }


def instance_context(instance: Instance) -> dict[str, Any]:
    """The instance's context as the review pages show it: every paragraph and table of its paper, and which of them
    are the context's own (a short context's paragraph and tables; a long context is the whole paper), in a fixed
    number of queries whatever the paper's size (`context_read`)."""
    data, _ = context_read(instance, own_only=False)
    return {"paper": instance.context.paper if instance.context else None, **data}


# Paragraphs of a paper per page of the workspace API's whole-paper reading.
PAPER_PAGE_SIZE = 100


def paper_paragraphs_page(*, user: AbstractBaseUser, instance_id: int, page: int) -> dict[str, Any]:
    """One page of the paragraphs of a held instance's paper, in order (for its holder); a page past the end is
    refused, naming how many there are."""
    instance = instance_held(instance_id, user)
    paper_id = instance.context.paper_id if instance.context_id else None
    paragraphs = Paragraph.objects.filter(paper_id=paper_id).order_by("order", "pk")
    mentions = Prefetch("mentioned_tables", queryset=Table.objects.only("id", "number"))
    paginator = Paginator(paragraphs.prefetch_related(mentions), PAPER_PAGE_SIZE)  # an empty paper has one page
    if not 1 <= page <= paginator.num_pages:
        raise InvalidInput(f"page is a number from 1 to {paginator.num_pages}, not {page}")
    shown = list(paginator.page(page))
    return {"count": paginator.count, "page": page, "pages": paginator.num_pages, "paragraphs": shown}


# What the instance serializer and the workspace read of the instance's relations in the same row: its project (the
# slug), reasoning type (the code) and context. Its people are named apart (`_name_people`): the holder is the user
# authentication read, and the others are mostly empty; each join more costs PostgreSQL planning time on every read.
WORKSPACE_JOINS = ("project", "reasoning_type", "context")
# Tables' and paragraphs' order (their Meta.ordering is paper, then order) for rows of one paper: ordering by the
# paper itself would join the paper and its project on every read to sort by the papers' own order.
IN_PAPER = ("paper_id", "order")
# Instance's people as the serializer shows them (by username), other than its author.
PEOPLE = ("round1_verifier", "round2_reviewer", "assigned_to")


def _ids_only(model: type[Table] | type[Paragraph]) -> Any:
    """A prefetch queryset that reads a relation's ids and nothing else (no ordering: the ids are a set)."""
    return model.objects.only("id").order_by()


def _name_people(instance: Instance, holder: AbstractBaseUser) -> None:
    """Attach the instance's people: the holder (its author, already read by authentication) and the others it
    names, their usernames read in one query (none when it names nobody else)."""
    instance.author = holder
    ids = {getattr(instance, f"{name}_id") for name in PEOPLE} - {None, holder.pk}
    people = {person.pk: person for person in get_user_model().objects.filter(pk__in=ids).only("id", "username")}
    people[holder.pk] = holder
    for name in PEOPLE:
        if getattr(instance, f"{name}_id") is not None:
            setattr(instance, name, people[getattr(instance, f"{name}_id")])


def workspace_read(*, user: AbstractBaseUser, instance_id: int, whole_paper: bool) -> dict[str, Any]:
    """What the workspace shows of a held instance (`instance_context`'s keys but `paper`; the paper's paragraph
    count, the suggested answer kind and form, and what keeps it from being submitted), each kind of row read once,
    in a fixed number of queries whatever the paper's size: the instance with its joins (and, without `whole_paper`,
    the paper's paragraph count as a subquery); the usernames of the people it names besides its holder, if any;
    what `context_read` reads; the paragraphs that mention the suggestion's tables (`answer_kind_evidence`). The
    suggestion reads its tables from those shown (a table it needs that is not shown is read apart)."""
    # The whole paper's paragraphs are read apart, so the context's own is joined only when it is all that shows.
    instances = Instance.objects.visible_to(user).select_related(
        *WORKSPACE_JOINS, "context__paper" if whole_paper else "context__paragraph"
    )
    if not whole_paper:
        count = Paragraph.objects.filter(paper_id=OuterRef("context__paper_id")).order_by().values("paper_id")
        instances = instances.annotate(paper_paragraphs=Subquery(count.annotate(n=Count("pk")).values("n")))
    # One row by its key: no ordering (the default one joins the project to sort by its name).
    instance = held(instances.filter(pk=instance_id).order_by().first(), user=user, instance_id=instance_id)
    _name_people(instance, user)
    context = instance.context
    own_only = not whole_paper and context is not None and context.kind == Context.Kind.SHORT
    data, (tables, context_table_ids) = context_read(instance, own_only=own_only)
    marked = {"relevant": data["relevant_ids"], "excluded": data["excluded_table_ids"]}
    return {
        "instance": instance,
        **data,
        "paper_paragraph_count": (instance.paper_paragraphs or 0) if own_only else len(data["all_paragraphs"]),
        "suggested_form": answer_form(instance.answer),  # SciTaT's short-form rule; "" while empty
        "suggested": suggested_answer_kind(instance, _suggestion_tables(instance, tables, context_table_ids)),
        "problems": submission_problems(instance, marked),
    }


def context_read(instance: Instance, *, own_only: bool) -> tuple[dict[str, Any], tuple[list[Table], list[int]]]:
    """The instance's marks (relevant tables, excluded tables, excluded paragraphs: ids) and its context's tables and
    paragraphs with their mentions: a short context's own with `own_only`, else the whole paper's. Beside them, what
    was read for the answer-kind suggestion: every table read, and the ids of the context's tables."""
    context = instance.context
    numbers = Table.objects.only("id", "number").order_by(*IN_PAPER)  # what a paragraph shows of its mentions
    lookups: list[Any] = [
        # The serializer lists them in order; a relevant table is one of the context's, of its paper.
        Prefetch("relevant_tables", queryset=Table.objects.only("id").order_by(*IN_PAPER)),
        Prefetch("excluded_tables", queryset=_ids_only(Table)),
        Prefetch("excluded_paragraphs", queryset=_ids_only(Paragraph)),
    ]
    if own_only:
        lookups += [
            Prefetch("context__tables", queryset=Table.objects.order_by(*IN_PAPER)),
            Prefetch("context__paragraph__mentioned_tables", queryset=numbers),
        ]
    prefetch_related_objects([instance], *lookups)
    tables: list[Table] = []
    paragraphs: list[Paragraph] = []
    context_table_ids: list[int] = []
    if own_only:
        tables = list(context.tables.all())
        paragraphs = [context.paragraph] if context.paragraph is not None else []
        context_table_ids = [t.pk for t in tables]
    elif context is not None:
        tables = list(Table.objects.filter(paper_id=context.paper_id).order_by(*IN_PAPER))
        paragraphs = list(
            Paragraph.objects.filter(paper_id=context.paper_id)
            .order_by(*IN_PAPER)
            .prefetch_related(Prefetch("mentioned_tables", queryset=numbers))
        )
        if context.kind == Context.Kind.SHORT:
            through = Context.tables.through.objects.filter(context_id=context.pk)
            context_table_ids = list(through.values_list("table_id", flat=True))
        else:  # a long context is the whole paper
            context_table_ids = [t.pk for t in tables]
    shown_table_ids = set(context_table_ids)
    paragraph_ids = {context.paragraph_id} if context is not None and context.kind == Context.Kind.SHORT else None
    return {
        "context": context,
        "context_tables": [t for t in tables if t.pk in shown_table_ids],
        "context_paragraphs": [p for p in paragraphs if paragraph_ids is None or p.pk in paragraph_ids],
        "all_paragraphs": paragraphs,
        "relevant_ids": {t.pk for t in instance.relevant_tables.all()},
        "excluded_table_ids": {t.pk for t in instance.excluded_tables.all()},
        "excluded_paragraph_ids": {p.pk for p in instance.excluded_paragraphs.all()},
    }, (tables, context_table_ids)


def _suggestion_tables(instance: Instance, read: list[Table], context_table_ids: list[int]) -> list[Table]:
    """The tables the answer-kind suggestion reads (`suggested_answer_kind`: the relevant ones, else the context's),
    taken from those already `read`; any other is read in one query."""
    wanted = [t.pk for t in instance.relevant_tables.all()] or context_table_ids
    by_id = {t.pk: t for t in read}
    missing = [pk for pk in wanted if pk not in by_id]
    return [by_id[pk] for pk in wanted if pk in by_id] + (list(Table.objects.filter(pk__in=missing)) if missing else [])


def workspace_data(*, user: AbstractBaseUser, instance_id: int, whole_paper: bool = True) -> dict[str, Any]:
    """Everything the workspace page shows for a held instance, in a fixed number of queries (`workspace_read`,
    and the project's reasoning types)."""
    data = workspace_read(user=user, instance_id=instance_id, whole_paper=whole_paper)
    instance = data["instance"]
    types = list(ReasoningType.objects.filter(project=instance.project).select_related("parent"))
    return {
        **data,
        "paper": data["context"].paper if data["context"] else None,
        "reasoning_types": [t for t in types if not any(o.parent_id == t.pk for o in types)],
        "diffs": draft_diffs(instance),
        "answer_types": list(ANSWER_TYPE_LABELS.items()),
        "scales": SCALE_FORM_CHOICES,
        "scale_value": scale_for_form(instance.scale),
    }


def work_of_annotator(*, user: AbstractBaseUser, project: Project) -> dict[str, Any]:
    """The annotator's own instances on their queue page: held, sent back, and the first done (each with when it
    was first handed in, and how many times it was)."""
    mine = Instance.objects.visible_to(user).filter(project=project, author=user).select_related("reasoning_type")
    # The first 50 done, chosen before their first submission is looked up: the lookup groups events, so asked of
    # the whole of an annotator's work it would read every event of theirs for a page of 50.
    first_done = mine.exclude(status__in=(Status.IN_REFINEMENT, Status.CHANGES_REQUESTED, Status.DRAFTED))
    done = mine.filter(pk__in=list(first_done.order_by("pk").values_list("pk", flat=True)[:50])).annotate(
        handed_in_at=Min("events__created_at", filter=Q(events__to_status=Status.SUBMITTED)),
        times_handed_in=Count("events", filter=Q(events__to_status=Status.SUBMITTED)),
    )
    return {
        "held": mine.filter(status=Status.IN_REFINEMENT),
        "returned": mine.filter(status=Status.CHANGES_REQUESTED),
        "done": done.order_by("pk"),
    }

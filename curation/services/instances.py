"""Edits of an instance's content: version-checked, and every saved edit becomes a revision."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from curation.answer_types import ANSWER_TYPES, SCALES, Suggestion, suggest_answer_type, suggest_scale
from curation.errors import Conflict, InvalidInput, NotFound, NotPermitted
from curation.models import Instance, InstanceRevision, Paragraph, Project, Table
from curation.services.projects import require_role
from curation.states import Role, Status
from curation.table_shape import shape_from_row
from curation.visibility import roles_in

EDITABLE_FIELDS = (
    "question",
    "rationale",
    "answer",
    "answer_form",
    "answer_source",
    "answer_type",
    "scale",
    "reasoning_type_id",
    "is_answerable",
    "unanswerable_reason",
)
_RELATION_FIELDS = {
    "relevant_table_ids": "relevant_tables",
    "excluded_table_ids": "excluded_tables",
    "excluded_paragraph_ids": "excluded_paragraphs",
}
# Who may edit content in which status: the holder while refining, the round-one verifier while deciding a flag.
_EDITORS = {
    Status.IN_REFINEMENT.value: "author_id",
    Status.IN_DISCUSSION.value: "round1_verifier_id",
}


def answer_kind_evidence(
    *, question: str, rationale: str, answer: list[str], tables: Iterable[Table], actions: Sequence[Any] = ()
) -> dict[str, Suggestion]:
    """The answer type and scale suggested for an answer, each with its evidence (curation.answer_types): from the
    cells of `tables` the answer is read or computed from (those its recorded program, `actions`, read, when it has
    one), their headers, the tables' captions and scale notes, and the text of the paragraphs that mention them (every
    paragraph of a paper whose one table it is: a report's page, as TAT-QA lays one out, speaks of its table)."""
    tables = sorted(tables, key=lambda t: (t.paper_id, t.order))
    shapes = [shape_from_row(table) for table in tables]
    papers = {table.paper_id for table in tables}
    lone = Table.objects.filter(paper_id__in=papers).values("paper_id").annotate(n=Count("id")).filter(n=1)
    notes = list(
        Paragraph.objects.filter(
            Q(mentioned_tables__in=[table.pk for table in tables]) | Q(paper_id__in=lone.values("paper_id"))
        )
        .distinct()
        .values_list("text", flat=True)
    )
    actions = [action for action in actions if isinstance(action, dict)]
    tools = [action.get("tool", "") for action in actions]
    answer_type = suggest_answer_type(question=question, rationale=rationale, answer=answer, tools=tools)
    scale = suggest_scale(
        question=question,
        rationale=rationale,
        answer=answer,
        tables=shapes,
        notes=notes,
        answer_type=answer_type.value,
        actions=actions,
    )
    return {"answer_type": answer_type, "scale": scale}


def answer_kind_suggested(
    *, question: str, rationale: str, answer: list[str], tables: Iterable[Table], actions: Sequence[Any] = ()
) -> dict[str, str]:
    """What a new draft starts with: the suggested answer type and scale where evidence backs them, else unset
    (answer type "", scale None; the scale "" is a choice: no scale); the annotator confirms or chooses."""
    evidence = answer_kind_evidence(
        question=question, rationale=rationale, answer=answer, tables=tables, actions=actions
    )
    return {"answer_type": evidence["answer_type"].value or "", "scale": evidence["scale"].value}


def revision_fields(instance: Instance) -> dict[str, Any]:
    """The editable fields of an instance as stored in a revision."""
    fields = {name: getattr(instance, name) for name in EDITABLE_FIELDS}
    fields["answer"] = list(instance.answer)
    for name, relation in _RELATION_FIELDS.items():
        fields[name] = sorted(getattr(instance, relation).values_list("id", flat=True))
    return fields


def clean_answer_fields(cleaned: dict[str, Any], *, drop_empty_items: bool = False) -> dict[str, Any]:
    """The checks every edit of an answer shares (an instance's, a double-annotation copy's): types, and the choices
    of form, source, answer type and scale (null: not chosen yet, "": no scale). Answer items are stripped, empty
    ones kept for the submission rule to name unless `drop_empty_items`."""
    if "answer" in cleaned:
        answer = cleaned["answer"]
        if not isinstance(answer, list) or not all(isinstance(item, str) for item in answer):
            raise InvalidInput("answer must be a list of strings.", detail={"field": "answer"})
        cleaned["answer"] = [item.strip() for item in answer if item.strip() or not drop_empty_items]
    if "is_answerable" in cleaned and not isinstance(cleaned["is_answerable"], bool):
        raise InvalidInput("is_answerable must be true or false.", detail={"field": "is_answerable"})
    for name in ("question", "rationale", "unanswerable_reason"):
        if name in cleaned and not isinstance(cleaned[name], str):
            raise InvalidInput(f"{name} must be a string.", detail={"field": name})
    if cleaned.get("answer_form", "") not in ("", *Instance.AnswerForm.values):
        raise InvalidInput("answer_form must be short or free.", detail={"field": "answer_form"})
    if cleaned.get("answer_source", "") not in ("", *Instance.AnswerSource.values):
        raise InvalidInput("answer_source must be text, table or table-text.", detail={"field": "answer_source"})
    if cleaned.get("answer_type", "") not in ("", *ANSWER_TYPES):
        raise InvalidInput(f"answer_type must be one of {', '.join(ANSWER_TYPES)}.", detail={"field": "answer_type"})
    if cleaned.get("scale") not in (None, *SCALES):
        raise InvalidInput(
            f"scale must be null (not chosen), empty (none) or one of {', '.join(SCALES[1:])}.",
            detail={"field": "scale"},
        )
    return cleaned


def _clean(fields: dict[str, Any], instance: Instance) -> dict[str, Any]:
    unknown = set(fields) - set(EDITABLE_FIELDS) - set(_RELATION_FIELDS)
    if unknown:
        raise InvalidInput(f"These fields cannot be edited: {', '.join(sorted(unknown))}.")
    cleaned = clean_answer_fields(dict(fields))
    if cleaned.get("reasoning_type_id") is not None:
        if not instance.project.reasoning_types.filter(pk=cleaned["reasoning_type_id"]).exists():
            raise InvalidInput("That reasoning type is not in this project.", detail={"field": "reasoning_type_id"})
    for name in _RELATION_FIELDS:
        if name not in cleaned:
            continue
        ids = cleaned[name]
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise InvalidInput(f"{name} must be a list of ids.", detail={"field": name})
        allowed = context_table_ids(instance) if "table" in name else context_paragraph_ids(instance)
        if set(ids) - allowed:
            raise InvalidInput(f"{name} names items outside this instance's context.", detail={"field": name})
    return cleaned


def context_table_ids(instance: Instance) -> set[int]:
    """Tables an instance's context offers: the linked tables (short) or all of the paper's (long)."""
    if not instance.context_id:
        return set()
    tables = instance.context.paper.tables if instance.context.kind == "long" else instance.context.tables
    return set(tables.values_list("id", flat=True))


def context_paragraph_ids(instance: Instance) -> set[int]:
    """Paragraphs an instance's context offers: its paragraph (short) or all of the paper's (long)."""
    if not instance.context_id:
        return set()
    if instance.context.kind == "long":
        return set(instance.context.paper.paragraphs.values_list("id", flat=True))
    return {instance.context.paragraph_id} if instance.context.paragraph_id else set()


@transaction.atomic
def instance_edit(
    *,
    instance_id: int,
    actor: AbstractBaseUser,
    expected_version: int,
    fields: dict[str, Any],
    kind: str = "edit",
    note: str = "",
) -> Instance:
    """Save an edit made on `expected_version`; a stale version raises Conflict so no one overwrites unseen work."""
    instance = Instance.objects.select_related("project", "context").filter(pk=instance_id).first()
    if instance is None:
        raise NotFound(f"Instance {instance_id} does not exist.")
    if not may_edit_now(instance=instance, user=actor):
        raise NotPermitted("You cannot edit this instance in its current state.")
    return edit_apply(
        instance=instance, actor=actor, expected_version=expected_version, fields=fields, kind=kind, note=note
    )


def may_edit_now(*, instance: Instance, user: AbstractBaseUser) -> bool:
    """Who may edit an instance's content now (`_EDITORS`: its holder while refining, its round-one verifier while
    deciding a flag; a manager of the project in those states): the rule of `instance_edit` and of the pages'
    edit and restore controls."""
    editor_field = _EDITORS.get(instance.status)
    if editor_field is None or not user.is_authenticated:
        return False
    return getattr(instance, editor_field) == user.pk or Role.MANAGER.value in roles_in(
        user=user, project_id=instance.project_id
    )


def revision_restorable(revision: InstanceRevision) -> dict[str, Any]:
    """The fields a restore of `revision` writes: its editable fields (a note it carries is not one)."""
    allowed = set(EDITABLE_FIELDS) | set(_RELATION_FIELDS)
    return {name: value for name, value in revision.fields.items() if name in allowed}


@transaction.atomic
def instance_revision_restore(
    *, instance_id: int, actor: AbstractBaseUser, expected_version: int, revision: int
) -> Instance:
    """Undo: write an earlier revision's fields back as a new revision ("restore"), by whoever may edit the instance
    now and version-checked like every edit (a stale version is a Conflict: 409)."""
    restored = InstanceRevision.objects.filter(instance_id=instance_id, number=revision).first()
    if restored is None:
        raise NotFound(f"Instance {instance_id} has no revision {revision}.")
    return instance_edit(
        instance_id=instance_id,
        actor=actor,
        expected_version=expected_version,
        fields=revision_restorable(restored),
        kind="restore",
        note=f"restored revision {revision}",
    )


@transaction.atomic
def instance_adopt(
    *, instance_id: int, actor: AbstractBaseUser, expected_version: int, fields: dict[str, Any], note: str
) -> Instance:
    """The round-one verifier holding the review writes fields taken from another version of the same item (double
    annotation: keep the second annotator's version, or merge); version-checked, kept as a revision like any edit.
    Nobody else edits in round one."""
    instance = Instance.objects.select_related("project", "context").filter(pk=instance_id).first()
    if instance is None:
        raise NotFound(f"Instance {instance_id} does not exist.")
    if instance.status != Status.ROUND1_REVIEW or instance.round1_verifier_id != actor.pk:
        raise NotPermitted("Only the verifier holding this round-one review may choose between its versions.")
    return edit_apply(
        instance=instance, actor=actor, expected_version=expected_version, fields=fields, kind="edit", note=note
    )


def edit_apply(
    *, instance: Instance, actor: AbstractBaseUser, expected_version: int, fields: dict[str, Any], kind: str, note: str
) -> Instance:
    """Write `fields` (validated) made on `expected_version` as a new version and revision; the caller has checked
    that `actor` may edit the instance now."""
    if expected_version != instance.version:
        raise Conflict(
            "This instance was changed elsewhere; reload it (your text is kept) and apply your edit again.",
            detail={"version": instance.version},
        )
    cleaned = _clean(fields, instance)
    relations = {_RELATION_FIELDS[name]: cleaned.pop(name) for name in list(cleaned) if name in _RELATION_FIELDS}
    updated = Instance.objects.filter(pk=instance.pk, version=expected_version, status=instance.status).update(
        version=F("version") + 1, updated_at=timezone.now(), **cleaned
    )
    if updated != 1:
        raise Conflict("This instance was changed elsewhere; reload it and apply your edit again.")
    instance.refresh_from_db()
    for relation, ids in relations.items():
        getattr(instance, relation).set(ids)
    revision_record(instance=instance, author=actor, kind=kind, note=note)
    return instance


@transaction.atomic
def instances_retype(
    *, project: Project, actor: AbstractBaseUser, instance_ids: list[int], reasoning_type_id: int
) -> int:
    """Give instances another reasoning type (all or none). Managers only; released instances are frozen.

    Each changed instance gets a new version and a revision, so someone editing it meanwhile is told (409).
    """
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="change reasoning types")
    ids = sorted(set(instance_ids))
    if not ids:
        raise InvalidInput("Choose the instances to re-type.")
    if not project.reasoning_types.filter(pk=reasoning_type_id).exists():
        raise InvalidInput("That reasoning type is not in this project.", detail={"field": "reasoning_type"})
    instances = list(Instance.objects.filter(project=project, pk__in=ids).select_for_update())
    if len(instances) != len(ids):
        found = {i.pk for i in instances}
        raise NotFound(f"No instance {', '.join(f'#{i}' for i in ids if i not in found)} in this project.")
    frozen = [f"#{i.pk}" for i in instances if i.status == Status.RELEASED]
    if frozen:
        raise InvalidInput(f"Released instances are frozen: {', '.join(frozen[:10])}.")
    changed = 0
    for instance in instances:
        if instance.reasoning_type_id == reasoning_type_id:
            continue
        updated = Instance.objects.filter(pk=instance.pk, version=instance.version).update(
            reasoning_type_id=reasoning_type_id, version=F("version") + 1, updated_at=timezone.now()
        )
        if updated != 1:
            raise Conflict(f"Instance #{instance.pk} changed meanwhile; reload and try again.")
        instance.refresh_from_db()
        revision_record(instance=instance, author=actor, kind="system", note="reasoning type changed by a manager")
        changed += 1
    return changed


def revision_record(
    *, instance: Instance, author: AbstractBaseUser | None, kind: str, note: str = ""
) -> InstanceRevision:
    """Append a revision with the instance's current editable fields (called inside the writer's transaction).
    The instance's row is locked first, so concurrent writers (autosave, the lease reaper) number one after another
    instead of both taking the same next number (issue 19.5)."""
    list(Instance.objects.select_for_update().filter(pk=instance.pk).values_list("pk", flat=True))
    last = instance.revisions.aggregate(number=Max("number"))["number"] or 0
    fields = revision_fields(instance)
    if note:
        fields["note"] = note
    return InstanceRevision.objects.create(instance=instance, number=last + 1, author=author, kind=kind, fields=fields)

"""Work-in-progress export: the instances a viewer may see, in any status, as JSONL or CSV — not a release.

Nothing is frozen or versioned: the file is the database as it is now. Answers, rationales, derivations and
programs go only to those who may read gold answers (`releases.selectors.can_read_gold`); for others those
columns are empty and the file says so in `answers_included`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch
from django.utils import timezone

from curation import selectors
from curation.errors import InvalidInput, NotFound
from curation.models import Batch, Instance, Project, Table
from curation.releases.selectors import can_read_gold
from curation.states import Status

FORMATS = ("jsonl", "csv")
COLUMNS = (
    "id",
    "status",
    "batch",
    "paper_id",
    "paper",
    "arxiv_id",
    "context_id",
    "paragraph",
    "tables",
    "reasoning_type",
    "question",
    "answer",
    "rationale",
    "answer_form",
    "answer_source",
    "answer_type",
    "scale",
    "derivation",
    "program",
    "author",
    "assigned_to",
    "version",
    "updated_at",
    "external_id",
    "answers_included",
    "is_release",
)
GOLD_COLUMNS = ("answer", "rationale", "derivation", "program")


@dataclass(frozen=True)
class WorkExport:
    """A file to stream: its name, media type and lines."""

    filename: str
    content_type: str
    lines: Iterator[str]
    answers_included: bool


def work_record(instance: Instance, *, answers_included: bool) -> dict[str, Any]:
    """One instance as a flat record in COLUMNS order."""
    context = instance.context
    record = {
        "id": instance.pk,
        "status": instance.status,
        "batch": instance.batch.name if instance.batch else "",
        "paper_id": context.paper_id if context else None,
        "paper": context.paper.title if context else "",
        "arxiv_id": context.paper.arxiv_id if context else "",
        "context_id": instance.context_id,
        "paragraph": context.paragraph.order + 1 if context and context.paragraph else None,
        "tables": [t.number or t.label for t in context.tables.all()] if context else [],
        "reasoning_type": instance.reasoning_type.code if instance.reasoning_type else "",
        "question": instance.question,
        "answer": list(instance.answer),
        "rationale": instance.rationale,
        "answer_form": instance.answer_form,
        "answer_source": instance.answer_source,
        "answer_type": instance.answer_type,
        "scale": instance.scale,
        "derivation": instance.derivation,
        "program": instance.program,
        "author": instance.author.username if instance.author else "",
        "assigned_to": instance.assigned_to.username if instance.assigned_to else "",
        "version": instance.version,
        "updated_at": instance.updated_at.isoformat(),
        "external_id": instance.external_uid,
        "answers_included": answers_included,
        "is_release": False,
    }
    if not answers_included:
        for name in GOLD_COLUMNS:
            record[name] = [] if name == "answer" else ""
    return record


def _jsonl(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    for record in records:
        yield json.dumps(record, ensure_ascii=False) + "\n"


class _Echo:
    """A file whose `write` gives back what it is given: a csv writer's `writerow` then returns the line."""

    def write(self, line: str) -> str:
        return line


def _csv(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(COLUMNS)
    for record in records:
        yield writer.writerow(
            [" | ".join(v) if isinstance(v, list) else ("" if v is None else v) for v in record.values()]
        )


def work_export(
    *,
    user: AbstractBaseUser,
    project: Project,
    file_format: str,
    statuses: Iterable[str] = (),
    batch_id: int | None = None,
) -> WorkExport:
    """The instances of `project` that `user` may see (optionally of some statuses and one batch), streamed."""
    selectors.project_get(user=user, slug=project.slug)
    if file_format not in FORMATS:
        raise InvalidInput(f"The format is {' or '.join(FORMATS)}, not {file_format!r}.", detail={"field": "format"})
    statuses = list(statuses)
    unknown = sorted(set(statuses) - set(Status.values))
    if unknown:
        raise InvalidInput(f"Unknown status {', '.join(unknown)}.", detail={"field": "status"})
    qs = selectors.instances_visible_to(user, project).select_related(
        "batch", "reasoning_type", "author", "assigned_to", "context__paper", "context__paragraph"
    )
    if statuses:
        qs = qs.filter(status__in=statuses)
    if batch_id is not None:
        if not Batch.objects.filter(project=project, pk=batch_id).exists():
            raise NotFound(f"No batch {batch_id} in this project.")
        qs = qs.filter(batch_id=batch_id)
    qs = qs.prefetch_related(Prefetch("context__tables", queryset=Table.objects.only("id", "number", "label")))
    answers_included = can_read_gold(user=user, project=project)
    rows = qs.order_by("id")
    records = (work_record(i, answers_included=answers_included) for i in rows.iterator(chunk_size=500))
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    filename = f"{project.slug}-work-in-progress-not-a-release-{stamp}.{file_format}"
    if file_format == "jsonl":
        return WorkExport(filename, "application/x-ndjson; charset=utf-8", _jsonl(records), answers_included)
    return WorkExport(filename, "text/csv; charset=utf-8", _csv(records), answers_included)

"""Work-in-progress export: the instances a viewer may see, in any status, as JSONL or CSV — not a release.

Nothing is frozen or versioned: the file is the database as it is now. Answers, rationales, derivations and
programs go only to those who may read gold answers (`releases.selectors.can_read_gold`); for others those
columns are empty and the file says so in `answers_included`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter
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
# Each column of a record, in order, with how it is read from an instance (its context's columns are empty without
# one); `answers_included` is the file's, set by work_record.
_READERS: dict[str, Callable[[Instance], Any]] = {
    "id": attrgetter("pk"),
    "status": attrgetter("status"),
    "batch": lambda i: i.batch.name if i.batch else "",
    "paper_id": lambda i: i.context.paper_id if i.context else None,
    "paper": lambda i: i.context.paper.title if i.context else "",
    "arxiv_id": lambda i: i.context.paper.arxiv_id if i.context else "",
    "context_id": attrgetter("context_id"),
    "paragraph": lambda i: i.context.paragraph.order + 1 if i.context and i.context.paragraph else None,
    "tables": lambda i: [t.number or t.label for t in i.context.tables.all()] if i.context else [],
    "reasoning_type": lambda i: i.reasoning_type.code if i.reasoning_type else "",
    "question": attrgetter("question"),
    "answer": lambda i: list(i.answer),
    "rationale": attrgetter("rationale"),
    "answer_form": attrgetter("answer_form"),
    "answer_source": attrgetter("answer_source"),
    "answer_type": attrgetter("answer_type"),
    "scale": attrgetter("scale"),
    "derivation": attrgetter("derivation"),
    "program": attrgetter("program"),
    "author": lambda i: i.author.username if i.author else "",
    "assigned_to": lambda i: i.assigned_to.username if i.assigned_to else "",
    "version": attrgetter("version"),
    "updated_at": lambda i: i.updated_at.isoformat(),
    "external_id": attrgetter("external_uid"),
    "answers_included": lambda i: None,
    "is_release": lambda i: False,
}
COLUMNS = tuple(_READERS)
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
    record = {name: read(instance) for name, read in _READERS.items()}
    record["answers_included"] = answers_included
    if not answers_included:
        for name in GOLD_COLUMNS:
            record[name] = [] if name == "answer" else ""
    return record


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
        lines = (json.dumps(record, ensure_ascii=False) + "\n" for record in records)
        return WorkExport(filename, "application/x-ndjson; charset=utf-8", lines, answers_included)
    return WorkExport(filename, "text/csv; charset=utf-8", _csv(records), answers_included)

"""Imports of existing benchmarks: one transaction per file, validated gold instances, source kept, no duplicates."""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import models, transaction
from django.template.defaultfilters import pluralize
from django.utils.module_loading import import_string

from curation.batches.services import batch_create
from curation.datasets.formats import ATTRIBUTION, FORMATS, LICENSE, DatasetFormatError, ParsedDataset, parse_dataset
from curation.datasets.models import ImportRecord, SourceRecord
from curation.errors import InvalidInput
from curation.models import Context, Paper, Paragraph, Project, ReasoningType, Table
from curation.services.lifecycle import instances_create
from curation.services.projects import require_role
from curation.states import Role, Status
from curation.toolkit.strict_json import JsonInputError, json_loads_strict

# releases/ sits above datasets/ (its pages and API call the import), so the cut behind `as_release` is registered
# by name from CurationConfig.ready instead of imported upward; an import asked for a release without it fails loudly.
_RELEASE_PATHS: dict[str, str] = {}


def import_release_register(*, path: str, name_path: str) -> None:
    """Register `path` (a dotted `release_cut`) as the cut an import with `as_release` makes in its transaction,
    and `name_path` (a dotted `release_name_slug`) as the check of its name before a big file is queued."""
    _RELEASE_PATHS.update(cut=path, name=name_path)


def _release_function(which: str) -> Callable[..., Any]:
    if which not in _RELEASE_PATHS:
        raise RuntimeError("no release cut is registered (CurationConfig.ready registers curation.releases.services)")
    return import_string(_RELEASE_PATHS[which])


def release_name_checked(name: str) -> str:
    """The slug the release `name` would be cut under; InvalidInput as the cut itself would say."""
    return _release_function("name")(name)


@dataclass
class ImportResult:
    """What an import did: the record, whether it was new, the release cut from it, and the counts."""

    record: ImportRecord
    created: bool
    release: models.Model | None = None  # the curation.releases Release an `as_release` import cut
    counts: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "import_id": self.record.pk,
            "format": self.record.format,
            "source": self.record.source_name,
            "sha256": self.record.source_sha256,
            "created": self.created,
            "counts": self.record.counts,
            "summary": import_counts_text(self.record.counts),
            "notes": self.record.notes,
            "release": None
            if self.release is None
            else {"id": self.release.pk, "name": self.release.name, "version": self.release.version},
        }


def import_counts_text(counts: dict[str, int]) -> str:
    """What an import brought, in words, for the page and the command alike (drafts named when there are any)."""
    drafts = counts.get("drafts", 0)
    split = f" ({counts.get('validated', 0)} validated, {drafts} as drafts to annotate)" if drafts else ""
    return f"{counts.get('questions', 0)} questions{split} over {counts.get('contexts', 0)} contexts"


def dataset_read(*, format: str, content: bytes) -> ParsedDataset:
    """Parse and validate a file's bytes; InvalidInput names the JSON path (or line) of the first fault, or says the
    file holds no questions (an empty import would store a record and a batch for nothing)."""
    if format not in FORMATS:
        raise InvalidInput(f"Unknown format {format!r}; expected one of {', '.join(FORMATS)}.")
    try:
        data = json_loads_strict(content.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise InvalidInput(f"The file is not UTF-8 text (byte {error.start}).") from error
    except JsonInputError as error:
        where = {"path": error.path} if error.path else {"line": error.line, "column": error.column}
        raise InvalidInput(str(error), detail=where) from error
    try:
        parsed = parse_dataset(format, data)
    except DatasetFormatError as error:
        raise InvalidInput(f"Malformed {format} file at {error}", detail={"path": error.path}) from error
    if not parsed.questions:
        raise InvalidInput(f"The {format} file holds no questions: nothing to import.")
    return parsed


def _reasoning_types(project: Project) -> dict[str, ReasoningType]:
    """Lookup of a project's reasoning types by code and by name, case-insensitively."""
    return {
        key.lower(): kind for kind in ReasoningType.objects.filter(project=project) for key in (kind.code, kind.name)
    }


def _table_fields(t: Any) -> dict[str, Any]:
    return dict(label=t.label, caption=t.caption, cells=t.cells, grid=t.cells, header_rows=t.header_rows)


def _paragraph_fields(p: Any) -> dict[str, Any]:
    return {"section": p.section, "text": p.text}


def _paper_rows(
    model: type[Table | Paragraph],
    paper: Paper,
    known: dict[str, Any],
    parsed: list[Any],
    fields: Callable[[Any], dict[str, Any]],
) -> list[Any]:
    """The paper's tables or paragraphs for a context's parsed ones, by key (`known`: the paper's so far): one the
    paper does not hold yet is created after the others, so a table two contexts cite is one table of the paper."""
    keys = [row.key or f"#{len(known) + i}" for i, row in enumerate(parsed)]
    new = {key: row for key, row in zip(keys, parsed, strict=True) if key not in known}
    created = model.objects.bulk_create(
        model(paper=paper, order=len(known) + i, **fields(row)) for i, row in enumerate(new.values())
    )
    known.update(zip(new, created, strict=True))
    return [known[key] for key in keys]


# How many imported questions one bulk insert holds (and how often the import job's progress moves).
IMPORT_CHUNK = 100


def dataset_import(
    *,
    project: Project,
    actor: AbstractBaseUser | None,
    format: str,
    source_name: str,
    content: bytes,
    as_release: str = "",
    extra_attribution: str = "",
    progress: Callable[[int], None] | None = None,
) -> ImportResult:
    """Import a benchmark file as validated instances, questions without an answer as drafts (and a release of the
    validated ones when asked). Managers only; `actor=None` is
    an operator command. The same file twice is recognised by its sha256 and imports nothing the second time;
    questions whose uid an earlier file of the same format already brought are skipped."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="import datasets")
    sha256 = hashlib.sha256(content).hexdigest()
    existing = ImportRecord.objects.filter(project=project, format=format, source_sha256=sha256).first()
    if existing is not None:
        return ImportResult(record=existing, created=False, release=existing.releases.order_by("-version").first())
    parsed = dataset_read(format=format, content=content)
    with transaction.atomic():
        fmt = parsed.format
        attribution = ATTRIBUTION[fmt] + (f"\n\n{extra_attribution.strip()}" if extra_attribution.strip() else "")
        batch = batch_create(project=project, actor=None, name=f"Import: {source_name}"[:200])
        record = ImportRecord.objects.create(
            project=project,
            format=fmt,
            source_name=source_name,
            source_sha256=sha256,
            source_bytes=len(content),
            batch=batch,
            notes=parsed.notes,
            attribution=attribution,
            created_by=actor,
        )
        known = set(SourceRecord.objects.filter(project=project, format=fmt).values_list("kind", "key").iterator())
        known_contexts = {
            key: (paper_id, context_id)
            for key, paper_id, context_id in SourceRecord.objects.filter(
                project=project, format=fmt, kind=SourceRecord.Kind.CONTEXT
            ).values_list("key", "paper_id", "context_id")
        }
        wanted_contexts = {q.context_key for q in parsed.questions if ("question", q.key) not in known}
        papers: dict[str, Paper] = {}
        contexts: dict[str, Context | None] = {}
        tables: dict[str, list[Table]] = {}
        records: list[SourceRecord] = []
        source_record = functools.partial(SourceRecord, project=project, import_record=record, format=fmt)
        new_contexts = 0
        # One Paper per paper key of the file (a SciTaT paper holds many contexts), its tables and paragraphs by key.
        paper_parts: dict[str, tuple[Paper, dict[str, Table], dict[str, Paragraph]]] = {}
        for parsed_context in parsed.contexts:
            key = parsed_context.key
            if key not in wanted_contexts:
                continue
            if key in known_contexts:
                paper_id, context_id = known_contexts[key]
                papers[key] = Paper.objects.get(pk=paper_id)
                contexts[key] = Context.objects.filter(pk=context_id).first()
                tables[key] = list(Table.objects.filter(paper_id=paper_id).order_by("order"))
                continue
            group = parsed_context.paper_key or key
            if group not in paper_parts:
                paper = Paper.objects.create(
                    project=project,
                    title=parsed_context.title,
                    source_name=source_name,
                    origin=fmt,
                    created_by=actor,
                )
                paper_parts[group] = (paper, {}, {})
            paper, paper_tables, paper_paragraphs = paper_parts[group]
            created_tables = _paper_rows(Table, paper, paper_tables, parsed_context.tables, _table_fields)
            paragraphs = _paper_rows(Paragraph, paper, paper_paragraphs, parsed_context.paragraphs, _paragraph_fields)
            context = None
            if parsed_context.kind != "none":
                context = Context.objects.create(project=project, paper=paper, kind=parsed_context.kind, batch=batch)
                if parsed_context.kind == "short" and paragraphs:
                    context.paragraph = paragraphs[0]
                    context.save(update_fields=["paragraph"])
                context.tables.set(created_tables)
            papers[key], contexts[key], tables[key] = paper, context, created_tables
            records.append(
                source_record(
                    kind=SourceRecord.Kind.CONTEXT, key=key, paper=paper, context=context, data=parsed_context.native
                )
            )
            # A TAT-DQA document is a paper without a context: counted under papers, not contexts.
            new_contexts += context is not None
        reasoning_types = _reasoning_types(project) if any(q.reasoning_type for q in parsed.questions) else {}
        new = [question for question in parsed.questions if ("question", question.key) not in known]
        skipped = len(parsed.questions) - len(new)
        imported, drafts = len(new), sum(question.is_draft for question in new)
        # In file order, a run of questions alike in status at a time (a few bulk inserts a run, whatever its size).
        for is_draft, alike in itertools.groupby(new, key=lambda question: question.is_draft):
            run = list(alike)
            for part in (run[start : start + IMPORT_CHUNK] for start in range(0, len(run), IMPORT_CHUNK)):
                rows = []
                for question in part:
                    context_tables = tables.get(question.context_key, [])
                    chosen = [context_tables[i] for i in question.relevant_table_indexes if i < len(context_tables)]
                    rows.append(
                        {
                            "batch": batch,
                            "context": contexts.get(question.context_key),
                            "external_uid": question.key[:200],
                            "reasoning_type": reasoning_types.get(question.reasoning_type.lower())
                            if question.reasoning_type
                            else None,
                            "relevant_tables": chosen,
                            "draft": {"origin": "import", "format": fmt, "source": source_name},
                            **question.fields,
                        }
                    )
                instances = instances_create(
                    project_id=project.pk,
                    actor=actor,
                    rows=rows,
                    initial_status=Status.DRAFTED if is_draft else Status.VALIDATED,
                    reason=f"imported from {source_name} ({fmt})" + (" without an answer" if is_draft else ""),
                )
                records.extend(
                    source_record(
                        kind=SourceRecord.Kind.QUESTION,
                        key=question.key,
                        paper=papers.get(question.context_key),
                        context=contexts.get(question.context_key),
                        instance=instance,
                        data=question.native,
                    )
                    for question, instance in zip(part, instances, strict=True)
                )
                if progress is not None:
                    progress(len(part))
        SourceRecord.objects.bulk_create(records, batch_size=500)
        record.counts = {
            "questions": imported,
            "validated": imported - drafts,
            "drafts": drafts,
            "contexts": sum(1 for c in parsed.contexts if c.kind != "none" and c.key in contexts),
            "new_contexts": new_contexts,
            "papers": len(papers),
            "skipped_known_questions": skipped,
            "questions_in_file": len(parsed.questions),
        }
        if drafts:
            record.notes = [
                *record.notes,
                f"{drafts} question{pluralize(drafts)} had no answer and came in as "
                f"{pluralize(drafts, 'a draft,drafts')} in batch “{batch.name}”: open the batch to put "
                f"{pluralize(drafts, 'it,them')} in the annotators' queue; "
                f"{pluralize(drafts, 'it is,they are')} refined and validated like any draft.",
            ]
        record.save(update_fields=["counts", "notes"])
        release = None
        if as_release and drafts == imported:
            record.notes = [*record.notes, f"No release “{as_release}” was cut: no imported question is validated yet."]
            record.save(update_fields=["notes"])
        elif as_release:
            release = _release_function("cut")(
                project=project,
                actor=actor,
                name=as_release,
                batch_ids=[batch.pk],
                description=f"Imported from {source_name} ({fmt}).",
                license=LICENSE.get(fmt, ""),
                citation=ATTRIBUTION[fmt],
                import_record=record,
            )
        return ImportResult(record=record, created=True, release=release, counts=record.counts)

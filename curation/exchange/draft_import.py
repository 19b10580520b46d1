"""Import of externally drafted questions (JSONL or CSV) as drafts to refine, validated whole before any write.

Each record names its context either by `context` (a context id) or by `paper` (id, arXiv id, source file
name or exact title) plus `paragraph` (the ¶ number on the paper page) and/or `table` (number or LaTeX label).
`question` is required; `answer` (a string, or a JSON list of strings), `rationale`, `reasoning_type` (a code
of the project's taxonomy), `answer_type` (span, multi-span, arithmetic, count), `scale` (none, thousand, million,
billion, percent), `relevant_tables` (numbers or labels of the context's tables, a list or comma-separated) and
`external_id` are optional; an answer type or scale a line does not give is suggested from evidence, as for any
draft. Every error names its line and field; a file
with any error writes nothing. Managers only.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.template.defaultfilters import pluralize

from curation.answer_types import ANSWER_TYPES, SCALES
from curation.errors import InvalidInput, NotFound
from curation.models import Batch, Context, Instance, Paper, Project, ReasoningType, Table
from curation.services.instances import answer_kind_suggested
from curation.services.lifecycle import instance_create
from curation.services.projects import require_role
from curation.states import Role
from curation.toolkit.strict_json import JsonInputError, json_loads_strict

FIELDS = (
    "context",
    "paper",
    "paragraph",
    "table",
    "question",
    "answer",
    "rationale",
    "reasoning_type",
    "answer_type",
    "scale",
    "relevant_tables",
    "external_id",
)
MAX_ERRORS = 20
MAX_RECORDS = 20000


@dataclass
class DraftRecord:
    """One validated line: where it goes and what it says."""

    line: int
    context: Context
    question: str
    answer: list[str]
    rationale: str
    reasoning_type: ReasoningType | None
    external_id: str
    answer_type: str | None = None
    scale: str | None = None
    relevant_tables: list[Table] = field(default_factory=list)


def draft_records_read(*, content: bytes, file_format: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, raw record) for each non-empty line of a JSONL file or each row of a CSV file."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"The file is not UTF-8 text (byte {exc.start}).", detail={"field": "file"}) from exc
    records: list[tuple[int, dict[str, Any]]] = []
    if file_format == "jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json_loads_strict(line)
            except JsonInputError as exc:
                raise InvalidInput(exc.one_line(number), detail={"field": "file"}) from exc
            if not isinstance(value, dict):
                raise InvalidInput(f"line {number}: expected a JSON object.", detail={"field": "file"})
            records.append((number, value))
    elif file_format == "csv":
        reader = csv.DictReader(io.StringIO(text))
        unknown = sorted(set(reader.fieldnames or []) - set(FIELDS))
        if not reader.fieldnames or "question" not in reader.fieldnames:
            raise InvalidInput("The CSV needs a header row with at least a question column.", detail={"field": "file"})
        if unknown:
            raise InvalidInput(f"Unknown CSV columns: {', '.join(unknown)}.", detail={"field": "file"})
        for row in reader:
            if any((value or "").strip() for value in row.values() if isinstance(value, str)):
                records.append((reader.line_num, {k: v for k, v in row.items() if v not in (None, "")}))
    else:
        raise InvalidInput(f"The format is jsonl or csv, not {file_format!r}.", detail={"field": "format"})
    if not records:
        raise InvalidInput("The file holds no records.", detail={"field": "file"})
    if len(records) > MAX_RECORDS:
        raise InvalidInput(f"At most {MAX_RECORDS} records per file.", detail={"field": "file"})
    return records


def _paper_for(project: Project, ref: Any) -> Paper | str:
    """The paper a reference names, or why none (ambiguous titles are refused)."""
    text = str(ref).strip()
    papers = Paper.objects.filter(project=project)
    match = papers.filter(pk=int(text)) if text.isdigit() else papers.none()
    for query in (Q(arxiv_id=text), Q(source_name=text), Q(title=text)):
        if match.exists():
            break
        match = papers.filter(query)
    found = list(match.order_by("-version")[:3])
    if not found:
        return f"no paper {text!r} in this project (use its id, arXiv id, source file name or exact title)"
    if len({(p.source_name, p.title) for p in found}) > 1:
        return f"{text!r} names several papers; use the paper id"
    return found[0]  # the latest version


def _context_for(project: Project, raw: dict[str, Any], cache: dict[Any, Any]) -> Context | tuple[str, str]:
    """The context a record names, or (the field at fault, why none)."""
    if raw.get("context") not in (None, ""):
        ref = str(raw["context"]).strip()
        context = Context.objects.filter(project=project, pk=int(ref)).first() if ref.isdigit() else None
        return context or ("context", f"no context {ref!r} in this project")
    if raw.get("paper") in (None, ""):
        return "paper", "give context, or paper with paragraph and/or table"
    # A file usually holds many questions per paper: each paper and its contexts are loaded once.
    ref_key = ("paper", str(raw["paper"]).strip())
    if ref_key not in cache:
        cache[ref_key] = _paper_for(project, raw["paper"])
    paper = cache[ref_key]
    if isinstance(paper, str):
        return "paper", paper
    if paper.pk not in cache:
        shorts = Context.objects.filter(paper=paper, kind=Context.Kind.SHORT).select_related("paragraph", "batch")
        cache[paper.pk] = list(shorts.prefetch_related("tables"))
    candidates = cache[paper.pk]
    if raw.get("paragraph") not in (None, ""):
        ref = str(raw["paragraph"]).strip().lstrip("¶")
        if not ref.isdigit():
            return "paragraph", f"{raw['paragraph']!r} is not a paragraph number (¶ on the paper page)"
        candidates = [c for c in candidates if c.paragraph and c.paragraph.order == int(ref) - 1]
        if not candidates:
            return "paragraph", f"¶{ref} of {paper.title!r} is no short context (it cites no table)"
    if raw.get("table") not in (None, ""):
        ref = str(raw["table"]).strip()
        citing = [c for c in candidates if any(ref in (t.number, t.label, *t.labels) for t in c.tables.all())]
        if not citing:
            where = "that paragraph" if raw.get("paragraph") not in (None, "") else f"any paragraph of {paper.title!r}"
            return "table", f"table {ref!r} is not cited by {where}"
        if len(citing) > 1:
            paragraphs = ", ".join(f"¶{c.paragraph.order + 1}" for c in citing[:6])
            return "table", f"table {ref!r} is cited by {paragraphs}; add the paragraph"
        candidates = citing
    elif raw.get("paragraph") in (None, ""):
        return "paragraph", "give the paragraph or the table the question is about"
    return candidates[0]


def _answer(value: Any) -> list[str] | None:
    if value in (None, ""):
        return []
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = json_loads_strict(value)
        except JsonInputError:
            return None
    values = value if isinstance(value, list) else [value]
    if all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in values):
        return [str(v).strip() for v in values]
    return None


def _relevant_tables(value: Any, context: Context) -> list[Table] | str:
    """The context's tables a line names by number or label, or why they cannot be matched."""
    if value in (None, ""):
        return []
    refs = value if isinstance(value, list) else str(value).split(",")
    tables = list(context.tables.all())
    found: list[Table] = []
    for ref in (str(ref).strip() for ref in refs):
        match = [t for t in tables if ref in (t.number, t.label, *t.labels)]
        if not match:
            return f"table {ref!r} is not a table of the context"
        found += [t for t in match if t not in found]
    return found


def draft_records_validate(*, project: Project, records: list[tuple[int, dict[str, Any]]]) -> list[DraftRecord]:
    """Match every record to its context and check every field; InvalidInput lists the first errors by line."""
    problems: list[str] = []

    def problem(line: int, name: str, message: str) -> None:
        problems.append(f"line {line}, {name}: {message}")

    types = {t.code: t for t in ReasoningType.objects.filter(project=project)}
    seen_ids: dict[str, int] = {}
    existing = set(
        Instance.objects.filter(project=project).exclude(external_uid="").values_list("external_uid", flat=True)
    )
    valid: list[DraftRecord] = []
    cache: dict[Any, Any] = {}
    for line, raw in records:
        if len(problems) >= MAX_ERRORS:
            break
        unknown = sorted(set(raw) - set(FIELDS))
        if unknown:
            problem(line, unknown[0], f"unknown field (expected {', '.join(FIELDS)})")
            continue
        question = raw.get("question")
        if not isinstance(question, str) or not question.strip():
            problem(line, "question", "a question is required")
        answer = _answer(raw.get("answer"))
        if answer is None:
            problem(line, "answer", "a string or a list of strings")
        rationale = raw.get("rationale", "")
        if not isinstance(rationale, str):
            problem(line, "rationale", "must be text")
        code = str(raw.get("reasoning_type") or "").strip()
        if code and code not in types:
            problem(line, "reasoning_type", f"{code!r} is not a reasoning type of this project")
        external_id = str(raw.get("external_id") or "").strip()[:200]
        if external_id in seen_ids:
            problem(line, "external_id", f"{external_id!r} is on line {seen_ids[external_id]} already")
        elif external_id in existing:
            problem(line, "external_id", f"{external_id!r} was imported before")
        if external_id:
            seen_ids.setdefault(external_id, line)
        context = _context_for(project, raw, cache)
        if isinstance(context, tuple):
            problem(line, *context)
            continue
        if answer is None or not isinstance(question, str) or not isinstance(rationale, str):
            continue
        answer_type = str(raw.get("answer_type") or "").strip().lower() or None
        if answer_type is not None and answer_type not in ANSWER_TYPES:
            problem(line, "answer_type", f"{answer_type!r} is not one of {', '.join(ANSWER_TYPES)}")
            continue
        scale = raw.get("scale")
        scale = None if scale in (None, "") else str(scale).strip().lower()
        if scale == "none":
            scale = ""
        if scale is not None and scale not in SCALES:
            problem(line, "scale", f"{scale!r} is not one of none, {', '.join(SCALES[1:])}")
            continue
        relevant = _relevant_tables(raw.get("relevant_tables"), context)
        if isinstance(relevant, str):
            problem(line, "relevant_tables", relevant)
            continue
        reasoning_type = types.get(code) if code else context.reasoning_type
        valid.append(
            DraftRecord(
                line,
                context,
                question.strip(),
                answer,
                rationale.strip(),
                reasoning_type,
                external_id,
                answer_type=answer_type,
                scale=scale,
                relevant_tables=relevant,
            )
        )
    if problems:
        shown = problems[:MAX_ERRORS]
        raise InvalidInput(
            f"Nothing was imported: {len(shown)} problem{pluralize(len(shown))}, first {shown[0]}.",
            detail={"errors": shown},
        )
    return valid


@transaction.atomic
def drafts_import(
    *,
    project: Project,
    actor: AbstractBaseUser | None,
    content: bytes,
    file_format: str,
    source_name: str = "",
    batch_id: int | None = None,
) -> list[Instance]:
    """Create one draft per record (in `batch_id`, else its context's batch) after the whole file validated.

    The draft keeps its imported text and provenance, so the workspace diffs the annotator's work against it.
    `actor=None` is an operator command (`manage.py import_drafts`)."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="import drafts")
    batch = None
    if batch_id is not None:
        batch = Batch.objects.filter(project=project, pk=batch_id).first()
        if batch is None:
            raise NotFound(f"No batch {batch_id} in this project.")
        if batch.state == Batch.State.CLOSED:
            raise InvalidInput(f"Batch {batch.name!r} is closed; choose another.", detail={"field": "batch"})
    records = draft_records_validate(
        project=project, records=draft_records_read(content=content, file_format=file_format)
    )
    created = []
    for record in records:
        provenance = {"source": "import", "file": source_name, "line": record.line}
        # What the line gives is kept; what it does not is suggested from evidence (or left for the annotator).
        suggested = answer_kind_suggested(
            question=record.question,
            rationale=record.rationale,
            answer=record.answer,
            tables=record.relevant_tables or record.context.tables.all(),
        )
        kind = {
            "answer_type": record.answer_type if record.answer_type is not None else suggested["answer_type"],
            "scale": record.scale if record.scale is not None else suggested["scale"],
        }
        created.append(
            instance_create(
                project_id=project.pk,
                actor=actor,
                reason=f"imported from {source_name or file_format} line {record.line}",
                context=record.context,
                batch=batch or record.context.batch,
                reasoning_type=record.reasoning_type,
                question=record.question,
                answer=record.answer,
                rationale=record.rationale,
                external_uid=record.external_id,
                relevant_tables=record.relevant_tables,
                **kind,
                draft={
                    "question": record.question,
                    "answer": record.answer,
                    "rationale": record.rationale,
                    **kind,
                    "relevant_table_ids": sorted(table.pk for table in record.relevant_tables),
                    "provenance": provenance,
                },
            )
        )
    return created

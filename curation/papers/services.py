"""Writes for papers: a LaTeX source becomes one paper version with tables, paragraphs and contexts, atomically."""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import CharField, Max, Model

from curation.errors import InvalidInput
from curation.latex import ArchiveLimits
from curation.models import Batch, Context, Paper, Paragraph, Project, Table
from curation.papers.reading import source_read
from curation.services.projects import require_role
from curation.states import Role

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip", ".gz", ".tex", ".ltx")
# New-style ids (YYMM.NNNNN, month checked) and old-style ones, which arXiv ships without the slash.
NEW_ARXIV_ID = re.compile(r"^(?:arxiv[-_:.]?)?(?P<id>\d{2}(?:0[1-9]|1[0-2])\.\d{4,5}(?:v\d+)?)$", re.IGNORECASE)
OLD_ARXIV_ID = re.compile(
    r"^(?:arxiv[-_:.]?)?(?P<archive>[a-z]+(?:-[a-z]+)?(?:\.[A-Z]{2})?)[/_]?(?P<number>\d{2}(?:0[1-9]|1[0-2])\d{3})"
    r"(?P<version>v\d+)?$",
    re.IGNORECASE,
)
CREATED = "created"
UNCHANGED = "unchanged"
NEW_VERSION = "new_version"
VERSION_RETRIES = 3
ModelT = TypeVar("ModelT", bound=Model)
_SUBTABLE_KEYS = ("label", "caption", "number", "first_row", "row_count")  # what a stored table keeps of each


class Upload(Protocol):
    """What Django's UploadedFile offers that ingestion needs."""

    name: str | None
    size: int | None

    def chunks(self, chunk_size: int | None = None) -> Iterable[bytes]: ...


@dataclass
class PaperSource:
    """A source read and extracted but not stored: what the database write needs, and nothing else. `extraction` is
    the `dataclasses.asdict` of a PaperExtraction, the form in which the bounded child's answer arrives."""

    source_name: str
    sha256: str
    extraction: dict[str, Any]


NO_TABLES_REASON = "No tables: kept, but it offers no contexts to draft (SciTaT §2.1 keeps only papers with tables)."
NO_CITING_PARAGRAPH_REASON = (
    "No paragraph cites a table: kept, but it offers no short context, so it cannot be drafted (SciTaT §2.1 drafts "
    "each question on a paragraph and the tables it cites)."
)


def paper_flag_reason(*, table_count: int, short_context_count: int, origin: str = "latex") -> str:
    """Why an ingested paper is flagged (kept, but offering nothing to draft), or "" when it is not: the one rule
    for every page. Imported datasets keep their own contexts (a TAT-DQA document has no extracted tables)."""
    if origin != "latex" or short_context_count:
        return ""
    return NO_TABLES_REASON if table_count == 0 else NO_CITING_PARAGRAPH_REASON


@dataclass
class IngestResult:
    """What ingesting one source did: created, unchanged (same bytes seen before) or a new version."""

    source_name: str
    status: str
    paper: Paper
    sha256: str
    tables: int
    paragraphs: int
    short_contexts: int
    long_contexts: int
    warnings: list[str] = field(default_factory=list)

    @property
    def contexts(self) -> int:
        return self.short_contexts + self.long_contexts

    @property
    def flag(self) -> str:
        return paper_flag_reason(
            table_count=self.tables, short_context_count=self.short_contexts, origin=self.paper.origin
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "source_name": self.source_name,
            "status": self.status,
            "paper_id": self.paper.pk,
            "title": self.paper.title,
            "version": self.paper.version,
            "arxiv_id": self.paper.arxiv_id,
            "main_file": self.paper.main_file,
            "sha256": self.sha256,
            "tables": self.tables,
            "paragraphs": self.paragraphs,
            "contexts": {"short": self.short_contexts, "long": self.long_contexts},
            "warnings": self.warnings,
            "flag": self.flag,
        }


def archive_limits() -> ArchiveLimits:
    """The upload limits configured in settings."""
    return ArchiveLimits(
        max_compressed_bytes=settings.TATCURATE_MAX_UPLOAD_BYTES,
        max_uncompressed_bytes=settings.TATCURATE_MAX_UNPACKED_BYTES,
        max_members=settings.TATCURATE_MAX_ARCHIVE_MEMBERS,
        max_ratio=float(settings.TATCURATE_MAX_COMPRESSION_RATIO),
    )


def arxiv_id_from_name(name: str) -> str:
    """The arXiv identifier a file name carries (`2401.01234v2.tar.gz` → `2401.01234v2`), or ""."""
    stem = Path(name.replace("\\", "/")).name
    suffix = next((suffix for suffix in ARCHIVE_SUFFIXES if stem.lower().endswith(suffix)), "")
    stem = stem[: len(stem) - len(suffix)]
    if match := NEW_ARXIV_ID.match(stem):
        return match.group("id")
    if match := OLD_ARXIV_ID.match(stem):
        return f"{match.group('archive')}/{match.group('number')}{match.group('version') or ''}"
    return ""


def paper_source_read(
    *, path_or_upload: str | Path | Upload, source_name: str = "", limits: ArchiveLimits | None = None
) -> PaperSource:
    """Check, hash and extract a source without touching the database; InvalidInput says why a source is refused."""
    limits = limits or archive_limits()
    with tempfile.TemporaryDirectory(prefix="tat-ingest-") as folder:
        path = _local_path(path_or_upload, Path(folder), limits)
        name = source_name or path.name or str(path_or_upload)  # an upload's path is named after it
        sha256, extraction = source_read(path=path, name=name, limits=limits)
    return PaperSource(source_name=name, sha256=sha256, extraction=asdict(extraction))


def paper_ingest(
    *,
    project: Project,
    actor: AbstractBaseUser | None,
    path_or_upload: str | Path | Upload,
    source_name: str = "",
    limits: ArchiveLimits | None = None,
    batch: Batch | None = None,
) -> IngestResult:
    """Store one source as a paper in one transaction; the same bytes twice store nothing. Managers only."""
    _require_manager(project=project, actor=actor, batch=batch)
    source = paper_source_read(path_or_upload=path_or_upload, source_name=source_name, limits=limits)
    return paper_store(project=project, actor=actor, source=source, batch=batch)


def paper_store(
    *, project: Project, actor: AbstractBaseUser | None, source: PaperSource, batch: Batch | None = None
) -> IngestResult:
    """Write an extracted source as a new paper (or a new version of one with the same source name), atomically."""
    _require_manager(project=project, actor=actor, batch=batch)
    for attempt in range(VERSION_RETRIES + 1):
        existing = Paper.objects.filter(project=project, source_sha256=source.sha256).first()
        if existing is not None:
            return _unchanged(existing, source)
        if attempt == VERSION_RETRIES:
            break
        try:
            with transaction.atomic():
                return _store(project=project, actor=actor, source=source, batch=batch)
        except IntegrityError:
            continue  # someone stored the same bytes, or took this version number, in the meantime: look again
    raise InvalidInput(f"{source.source_name}: could not pick a version number; try again.")


def _require_manager(*, project: Project, actor: AbstractBaseUser | None, batch: Batch | None) -> None:
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="ingest papers")
    if batch is not None and batch.project_id != project.pk:
        raise InvalidInput(f"Batch {batch.name!r} belongs to another project.")


def _store(
    *, project: Project, actor: AbstractBaseUser | None, source: PaperSource, batch: Batch | None
) -> IngestResult:
    extraction = _clean(source.extraction)  # its text cleaned of NUL once, here
    previous = (
        Paper.objects.filter(project=project, origin="latex", source_name=source.source_name)
        .aggregate(version=Max("version"))
        .get("version")
    )
    version = (previous or 0) + 1
    title = extraction["title"].strip() or Path(extraction["main_file"] or source.source_name).stem or "Untitled paper"
    warnings = extraction["warnings"]
    paper = _fitted(
        Paper,
        extraction,
        project=project,
        title=title,
        source_name=source.source_name,
        source_sha256=source.sha256,
        version=version,
        arxiv_id=arxiv_id_from_name(source.source_name),
        source_report={key: extraction[key] for key in ("files", "unused_files", "main_file_candidates")},
        origin="latex",
        created_by=actor,
    )
    paper.save(force_insert=True)
    tables = Table.objects.bulk_create(
        _fitted(
            Table,
            table,
            paper=paper,
            order=order,
            cells=table["rows"],
            raw_latex=table["raw"],
            subtables=[{key: sub[key] for key in _SUBTABLE_KEYS} for sub in table["subtables"]],
        )
        for order, table in enumerate(extraction["tables"])
    )
    by_index = {table["index"]: stored for table, stored in zip(extraction["tables"], tables, strict=True)}
    paragraphs = Paragraph.objects.bulk_create(
        _fitted(Paragraph, paragraph, paper=paper, order=order)
        for order, paragraph in enumerate(extraction["paragraphs"])
    )
    links = [  # each paragraph that mentions tables, with them
        (stored, linked)
        for paragraph, stored in zip(extraction["paragraphs"], paragraphs, strict=True)
        if (linked := [by_index[index] for index in dict.fromkeys(paragraph["tables"]) if index in by_index])
    ]
    Paragraph.mentioned_tables.through.objects.bulk_create(
        Paragraph.mentioned_tables.through(paragraph_id=paragraph.pk, table_id=table.pk)
        for paragraph, linked in links
        for table in linked
    )
    short_contexts = Context.objects.bulk_create(
        Context(project=project, paper=paper, kind=Context.Kind.SHORT, paragraph=paragraph, batch=batch)
        for paragraph, _ in links
    )
    # A paper without tables is kept for reference but offers no context at all (SciTaT §2.1).
    long_contexts = (
        [Context.objects.create(project=project, paper=paper, kind=Context.Kind.LONG, batch=batch)] if tables else []
    )
    context_tables = [
        *((context, linked) for context, (_, linked) in zip(short_contexts, links, strict=True)),
        *((context, tables) for context in long_contexts),
    ]
    Context.tables.through.objects.bulk_create(
        Context.tables.through(context_id=context.pk, table_id=table.pk)
        for context, linked in context_tables
        for table in linked
    )
    status = CREATED if version == 1 else NEW_VERSION
    return IngestResult(
        source_name=source.source_name,
        status=status,
        paper=paper,
        sha256=source.sha256,
        tables=len(tables),
        paragraphs=len(paragraphs),
        short_contexts=len(short_contexts),
        long_contexts=len(long_contexts),
        warnings=warnings,
    )


def _unchanged(paper: Paper, source: PaperSource) -> IngestResult:
    contexts = Counter(Context.objects.filter(paper=paper).values_list("kind", flat=True))
    return IngestResult(
        source_name=source.source_name,
        status=UNCHANGED,
        paper=paper,
        sha256=source.sha256,
        tables=paper.tables.count(),
        paragraphs=paper.paragraphs.count(),
        short_contexts=contexts[Context.Kind.SHORT],
        long_contexts=contexts[Context.Kind.LONG],
        warnings=list(paper.warnings),
    )


def _local_path(path_or_upload: str | Path | Upload, folder: Path, limits: ArchiveLimits) -> Path:
    if isinstance(path_or_upload, str | Path):
        return Path(path_or_upload)
    name = _safe_file_name(path_or_upload.name or "upload")
    declared = path_or_upload.size or 0
    if declared > limits.max_compressed_bytes:
        raise InvalidInput(
            f"{name}: upload is {declared} bytes, over the {limits.max_compressed_bytes}-byte limit",
            detail={"source_name": name},
        )
    target = folder / "upload" / name
    target.parent.mkdir()
    written = 0
    with target.open("wb") as sink:
        for chunk in path_or_upload.chunks():
            written += len(chunk)
            # The declared size comes from the client; count what arrives.
            if written > limits.max_compressed_bytes:
                raise InvalidInput(
                    f"{name}: upload is over the {limits.max_compressed_bytes}-byte limit",
                    detail={"source_name": name},
                )
            sink.write(chunk)
    if written == 0:
        raise InvalidInput(f"{name}: the file is empty", detail={"source_name": name})
    return target


def _safe_file_name(name: str) -> str:
    base = Path(name.replace("\\", "/")).name
    base = re.sub(r"[^A-Za-z0-9._+-]", "_", base).lstrip(".")
    return base[:200] or "upload"


def _fitted(model: type[ModelT], extracted: dict[str, Any], **given: Any) -> ModelT:
    """An unsaved `model` row holding the extracted values its own fields are named after, and `given` (which win);
    text cut to its column's length (None as ""): one rule for every stored table, paragraph and paper."""
    fields = {
        field.name: field for field in model._meta.concrete_fields if not (field.primary_key or field.is_relation)
    }
    values = {name: extracted[name] for name in fields if name in extracted} | given
    for name, value in values.items():
        if isinstance(fields.get(name), CharField):
            values[name] = _clean(value or "")[: fields[name].max_length]
    return model(**values)


def _clean(value: Any) -> Any:
    # PostgreSQL refuses NUL in text and JSON; a stray one in a source must not fail the paper.
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    return value

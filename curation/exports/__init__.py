"""Release exports: every format is a zip with the data, a dataset card (README.md) and SHA256SUMS, written
streaming so memory stays flat as a release grows."""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import tempfile
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

EXPORT_FORMATS: dict[str, str] = {
    "scitat": "SciTaT JSON",
    "tatqa": "TAT-QA JSON",
    "tatdqa": "TAT-DQA JSON (questions grouped by their document, `doc`)",
    "finqa": "FinQA JSON",
    "jsonl": "JSON lines (context inline)",
    "parquet": "Parquet (Hugging Face datasets)",
    "csv": "CSV of questions and answers",
}
EXTENSIONS = {
    "scitat": "json",
    "tatqa": "json",
    "tatdqa": "json",
    "finqa": "json",
    "jsonl": "jsonl",
    "parquet": "parquet",
    "csv": "csv",
}
# The frozen contexts each layout reads beside an item (curation.exports.rows): a TAT-DQA document is its questions
# alone, JSON lines carries the question's context and the whole paper, the others the context it was asked on.
CONTEXTS_READ = {
    "scitat": "primary",
    "tatqa": "primary",
    "tatdqa": "none",
    "finqa": "primary",
    "jsonl": "both",
    "parquet": "primary",
    "csv": "primary",
}
COPY_CHUNK = 1 << 20


class _HashingWriter(io.RawIOBase):
    """Pass bytes through to a zip entry while hashing them."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.digest = hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.digest.update(data)
        self.target.write(data)
        return len(data)


def write_bundle(
    out_path: Path,
    *,
    fmt: str,
    rows: Iterable[Any],
    card: Callable[[list[str], Counter[tuple[str, ...]]], str],
    name: str,
    progress: Callable[[int], None] | None = None,
) -> tuple[str, int]:
    """Write the zip at `out_path`; returns (sha256 of the zip, its size in bytes). The card is written last, from
    the data files' names and what the data held (for tatdqa, the keys of each document's `doc`)."""
    from curation.exports.writers import write_parquet, write_text_format

    data_name = f"data/{name}.{EXTENSIONS[fmt]}"
    sums: list[tuple[str, str]] = []
    doc_keys: Counter[tuple[str, ...]] = Counter()
    with zipfile.ZipFile(out_path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as bundle:
        if fmt == "parquet":
            # Parquet wants a seekable file: write it to disk, then copy it into the zip in chunks.
            with tempfile.TemporaryDirectory() as tmp:
                parquet_path = Path(tmp) / "data.parquet"
                write_parquet(parquet_path, rows, progress)
                with bundle.open(data_name, "w", force_zip64=True) as entry, parquet_path.open("rb") as source:
                    hashing = _HashingWriter(entry)
                    shutil.copyfileobj(source, hashing, COPY_CHUNK)
        else:
            with bundle.open(data_name, "w", force_zip64=True) as entry:
                hashing = _HashingWriter(entry)
                buffered = io.BufferedWriter(hashing, buffer_size=COPY_CHUNK)
                text = io.TextIOWrapper(buffered, encoding="utf-8", newline="")
                write_text_format(fmt, text, rows, progress, doc_keys=doc_keys)
                text.flush()
                text.detach()
                buffered.flush()
        sums.append((hashing.digest.hexdigest(), data_name))
        readme = card([data_name], doc_keys).encode("utf-8")
        bundle.writestr("README.md", readme)
        sums.append((hashlib.sha256(readme).hexdigest(), "README.md"))
        bundle.writestr("SHA256SUMS", "".join(f"{digest}  {path}\n" for digest, path in sums))
    digest = hashlib.sha256()
    with out_path.open("rb") as written:
        for block in iter(lambda: written.read(COPY_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest(), out_path.stat().st_size


def source_papers(release: Any) -> list[dict[str, Any]]:
    """The papers the release's questions are asked over (key, title, arXiv id), once each, from its long contexts."""
    papers: dict[str, dict[str, Any]] = {}
    for paper in release.contexts.filter(kind="long").order_by("id").values_list("data__paper", flat=True).iterator():
        if isinstance(paper, dict) and paper.get("key"):
            papers.setdefault(paper["key"], paper)
    return [papers[key] for key in sorted(papers, key=_natural)]


def _natural(key: str) -> list[Any]:
    """ "paper-9" before "paper-10": the digits of a key compared as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", key)]


def release_card_fields(release: Any) -> dict[str, Any]:
    """The release metadata a dataset card shows, as plain data."""
    return {
        "label": release.label,
        "name": release.name,
        "version": release.version,
        "project": release.project.name,
        "created_at": release.created_at.isoformat(timespec="seconds"),
        "item_count": release.item_count,
        "content_hash": release.content_hash,
        "description": release.description,
        "changelog": release.changelog,
        "license": release.license,
        "citation": release.citation,
        "attribution": release.attribution,
        "notes": release.notes,
        "split_seed": release.split_seed,
        "split_ratios": release.split_ratios,
        "statistics": release.statistics,
        "papers": source_papers(release),
    }


def write_export_zip(
    release: Any, fmt: str, out_path: Path, *, progress: Callable[[int], None] | None = None
) -> tuple[str, int]:
    """Export `release` in `fmt` to a zip at `out_path`; returns (sha256, size)."""
    from curation.exports.card import dataset_card
    from curation.exports.rows import release_rows

    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}")
    fields = release_card_fields(release)
    return write_bundle(
        out_path,
        fmt=fmt,
        rows=release_rows(release, contexts=CONTEXTS_READ[fmt]),
        card=lambda files, doc_keys: dataset_card(fields, fmt, files, doc_keys=doc_keys),
        name=release.label,
        progress=progress,
    )

"""Release exports: every format is a zip with the data, a dataset card (README.md) and SHA256SUMS, written
streaming so memory stays flat as a release grows."""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import tempfile
import time
import zipfile
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

# Each format: its label, its data file's extension, and the frozen contexts it reads beside an item
# (curation.exports.rows): a TAT-DQA document is its questions alone, JSON lines and the Hugging Face folder carry the
# question's context and the whole paper, the others the context it was asked on.
_FORMATS = {
    "scitat": ("SciTaT JSON", "json", "primary"),
    "tatqa": ("TAT-QA JSON", "json", "primary"),
    "tatdqa": ("TAT-DQA JSON (questions grouped by their document)", "json", "none"),
    "finqa": ("FinQA JSON", "json", "primary"),
    "jsonl": ("JSON lines (context inline)", "jsonl", "both"),
    "parquet": ("Parquet (one file, each question with the context it was asked on)", "parquet", "primary"),
    "hf": (
        "Hugging Face datasets folder (Parquet per context setting and split, configs in the card)",
        "parquet",
        "both",
    ),
    "csv": ("CSV of questions and answers", "csv", "primary"),
}
EXPORT_FORMATS = {fmt: label for fmt, (label, _, _) in _FORMATS.items()}
EXTENSIONS = {fmt: extension for fmt, (_, extension, _) in _FORMATS.items()}
CONTEXTS_READ = {fmt: contexts for fmt, (_, _, contexts) in _FORMATS.items()}
# Bytes moved at a time (a text member's buffer before the compressor, the parquet copy): a fixed buffer
# that a small release fills less than a big one, so kept small it does not read as growth.
COPY_CHUNK = 1 << 16
# Source papers of the card read per query.
PAPER_CHUNK = 100


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


def _text_member(bundle: zipfile.ZipFile, member: str | zipfile.ZipInfo, write: Callable[[IO[str]], Any]) -> str:
    """Write a zip member as UTF-8 text through `write(stream)`, in pieces; returns the sha256 of its bytes."""
    with bundle.open(member, "w", force_zip64=isinstance(member, str)) as entry:
        hashing = _HashingWriter(entry)
        buffered = io.BufferedWriter(hashing, buffer_size=COPY_CHUNK)
        text = io.TextIOWrapper(buffered, encoding="utf-8", newline="")
        write(text)
        text.flush()
        text.detach()
        buffered.flush()
    return hashing.digest.hexdigest()


def write_export_zip(
    release: Any, fmt: str, out_path: Path, *, progress: Callable[[int], None] | None = None
) -> tuple[str, int]:
    """Export `release` in `fmt` to a zip at `out_path`; returns (sha256 of the zip, its size in bytes). The card is
    written last, from the data files' names and what the data held (for tatdqa, the keys of each document's `doc`; for
    tatqa, tatdqa and finqa, how many questions the layout left out and why);
    it comes in pieces and is written as it comes, so neither the data nor the card is ever whole in memory."""
    from curation.exports.card import dataset_card
    from curation.exports.rows import release_rows
    from curation.exports.writers import write_parquet, write_parquet_folder, write_text_format

    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}")
    fields = release_card_fields(release)
    rows = release_rows(release, contexts=CONTEXTS_READ[fmt])
    data_name = f"data/{release.label}.{EXTENSIONS[fmt]}"
    doc_keys: Counter[tuple[str, ...]] = Counter()
    left_out: Counter[str] = Counter()
    sums: list[tuple[str, str]] = []
    with zipfile.ZipFile(out_path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as bundle:
        if EXTENSIONS[fmt] == "parquet":
            # Parquet wants a seekable file: write it to disk, then copy it into the zip in chunks.
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                if fmt == "hf":
                    written = {f"data/{part}": folder / part for part in write_parquet_folder(folder, rows, progress)}
                else:
                    write_parquet(folder / "data.parquet", rows, progress)
                    written = {data_name: folder / "data.parquet"}
                for member, path in written.items():
                    with bundle.open(member, "w", force_zip64=True) as entry, path.open("rb") as source:
                        hashing = _HashingWriter(entry)
                        shutil.copyfileobj(source, hashing, COPY_CHUNK)
                    sums.append((hashing.digest.hexdigest(), member))
        else:

            def write_data(out: IO[str]) -> None:
                write_text_format(fmt, out, rows, progress, doc_keys=doc_keys, left_out=left_out)

            sums.append((_text_member(bundle, data_name, write_data), data_name))
        # As `writestr` would name it (its time and mode), so the zip reads as before the card was streamed.
        readme = zipfile.ZipInfo("README.md", date_time=time.localtime(time.time())[:6])
        readme.compress_type, readme.external_attr = bundle.compression, 0o600 << 16
        readme._compresslevel = bundle.compresslevel  # type: ignore[attr-defined]  # what writestr sets
        # What the card reads up front is read before its member is opened.
        files = [member for _digest, member in sums]
        pieces = dataset_card(fields, fmt, files, papers=source_papers(release), doc_keys=doc_keys, left_out=left_out)
        sums.append((_text_member(bundle, readme, lambda out: out.writelines(pieces)), "README.md"))
        bundle.writestr("SHA256SUMS", "".join(f"{digest}  {path}\n" for digest, path in sums))
    with out_path.open("rb") as written:
        return hashlib.file_digest(written, "sha256").hexdigest(), out_path.stat().st_size


def source_papers(release: Any) -> Iterator[dict[str, Any]]:
    """The papers the release's questions are asked over (key, title, arXiv id), once each (the first long context
    of a key), in number order of their keys, read in chunks of PAPER_CHUNK as they are consumed.

    The order is found now, eagerly, and kept as context ids alone: each key's first id is held only while the keys
    are sorted (the databases cannot sort "paper-9" before "paper-10"), and the papers are never all in memory.
    """
    contexts = release.contexts.filter(kind="long").order_by()
    first: dict[str, int] = {}
    for pk, key in contexts.order_by("id").values_list("id", "data__paper__key").iterator(chunk_size=PAPER_CHUNK):
        if isinstance(key, str) and key:
            first.setdefault(key, pk)
    order = array("q", (first[key] for key in sorted(first, key=_natural)))
    del first
    return _papers_in_order(contexts, order)


def _papers_in_order(contexts: Any, order: array[int]) -> Iterator[dict[str, Any]]:
    for start in range(0, len(order), PAPER_CHUNK):
        ids = order[start : start + PAPER_CHUNK]
        # Iterated, not evaluated: an evaluated queryset keeps its rows in its result cache, and the queryset goes
        # with its compiler in a reference cycle, so each chunk's papers would live on until a collection.
        papers = dict(contexts.filter(pk__in=list(ids)).values_list("id", "data__paper").iterator())
        for pk in ids:
            yield papers[pk]
        del papers  # before the next chunk is read, so one chunk is held at a time


def _natural(key: str) -> list[Any]:
    """ "paper-9" before "paper-10": the digits of a key compared as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", key)]


def release_card_fields(release: Any) -> dict[str, Any]:
    """The release metadata a dataset card shows, as plain data."""
    copied = ("name", "version", "item_count", "content_hash", "description", "changelog", "license", "citation")
    copied += ("attribution", "notes", "split_seed", "split_ratios", "statistics")
    return {
        "label": release.label,
        "project": release.project.name,
        "created_at": release.created_at.isoformat(timespec="seconds"),
        **{name: getattr(release, name) for name in copied},
    }

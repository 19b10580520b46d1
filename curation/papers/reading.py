"""Reading one paper source without Django: refuse what is not LaTeX, hash it, unpack and extract it.

Pure (no Django, no database), so the bounded child process (curation/papers/child.py) imports only this and
curation.latex; the web and the worker never run it on untrusted bytes outside that child.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from curation.errors import InvalidInput
from curation.latex import ArchiveLimits, PaperExtraction, SourceTooLarge, UnsafeArchiveError, extract_paper
from curation.latex.archive import archive_kind
from curation.latex.extract import PLAIN_SUFFIXES, Progress

LATEX_NEEDED = (
    "TaT-Curate reads tables and text from LaTeX sources: upload the .tex file, its folder, "
    "or the source archive (on arXiv: “TeX Source”, a .tar.gz)."
)


def check_latex_source(path: Path, name: str) -> None:
    """Refuse a file that is neither LaTeX nor an archive with what to upload instead (PDFs are the usual case)."""
    if path.suffix.lower() in PLAIN_SUFFIXES or archive_kind(path) is not None:
        return
    with path.open("rb") as handle:
        is_pdf = handle.read(5) == b"%PDF-" or path.suffix.lower() == ".pdf"
    what = "this is a PDF" if is_pdf else "this is neither a .tex file nor a source archive"
    raise InvalidInput(f"{name}: {what}. {LATEX_NEEDED}", detail={"source_name": name})


def source_read(
    *, path: Path, name: str, limits: ArchiveLimits, progress: Progress | None = None
) -> tuple[str, PaperExtraction]:
    """Check, hash and extract one source (a .tex, a folder or an archive): its SHA-256 and its extraction, all the
    database write needs. InvalidInput says why it is refused.
    `progress(stage, counts)` hears "unpacking" (with the member count once unpacked) and "extracting"."""
    if path.is_dir():
        sha256 = folder_sha256(path, limits)
    elif not path.is_file():
        raise InvalidInput(f"{name}: no such file or folder")
    elif (size := path.stat().st_size) > limits.max_compressed_bytes:
        raise InvalidInput(
            f"{name}: file is {size} bytes, over the {limits.max_compressed_bytes}-byte limit",
            detail={"source_name": name},
        )
    else:
        check_latex_source(path, name)
        sha256 = ""
    try:
        extraction = extract_paper(path, limits=limits, progress=progress)
    except UnsafeArchiveError as error:
        raise InvalidInput(f"{name}: archive rejected: {error}", detail={"source_name": name}) from error
    except SourceTooLarge as error:
        raise InvalidInput(f"{name}: {error}", detail={"source_name": name}) from error
    except OSError as error:
        raise InvalidInput(f"{name}: cannot read the source: {error}", detail={"source_name": name}) from error
    if not extraction.paragraphs and not extraction.tables:
        # Say, an archive that expands to zeros: a paper of nothing would be stored and listed.
        raise InvalidInput(
            f"{name}: no text: the source expands to no paragraph and no table", detail={"source_name": name}
        )
    if not sha256:
        sha256 = file_sha256(path, extraction)
    return sha256, extraction


def folder_sha256(root: Path, limits: ArchiveLimits) -> str:
    files = [path for path in root.rglob("*") if path.is_file() and ".git" not in path.relative_to(root).parts]
    if len(files) > limits.max_members:
        raise InvalidInput(f"{root.name}: folder has more than {limits.max_members} files")
    total = sum(path.stat().st_size for path in files)
    if total > limits.max_uncompressed_bytes:
        raise InvalidInput(f"{root.name}: folder holds more than {limits.max_uncompressed_bytes} bytes")
    return files_sha256(root, files)


def files_sha256(root: Path, files: list[Path]) -> str:
    # Names are part of the digest, so moving a file is a change; each content is hashed separately to stream.
    digest = hashlib.sha256()
    for path in sorted(files, key=lambda path: path.relative_to(root).as_posix()):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(sha256_of(path).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def file_sha256(path: Path, extraction: PaperExtraction) -> str:
    if path.suffix.lower() not in PLAIN_SUFFIXES:
        return sha256_of(path)
    # A .tex beside the files it \input s: the source is the main file plus what it included.
    root = path.parent
    included = {root / name for name in extraction.files if (root / name).is_file()} - {path}
    if not included:
        return sha256_of(path)
    return files_sha256(root, [path, *included])

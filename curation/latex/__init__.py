"""LaTeX paper extraction without Django: tables, paragraphs and table mentions from a source tree."""

from __future__ import annotations

from curation.latex.archive import ArchiveLimits, UnsafeArchiveError, unpack_archive
from curation.latex.extract import extract_paper
from curation.latex.results import PaperExtraction
from curation.latex.sources import SourceTooLarge

__all__ = [
    "ArchiveLimits",
    "PaperExtraction",
    "SourceTooLarge",
    "UnsafeArchiveError",
    "extract_paper",
    "unpack_archive",
]

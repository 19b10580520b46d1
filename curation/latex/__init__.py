"""LaTeX paper extraction without Django: tables, paragraphs and table mentions from a source tree."""

from __future__ import annotations

from curation.latex.archive import ArchiveLimits, UnsafeArchiveError, unpack_archive
from curation.latex.extract import extract_directory, extract_paper
from curation.latex.results import CellSpan, ExtractedParagraph, ExtractedTable, PaperExtraction, SubTable
from curation.latex.sources import SourceTooLarge

__all__ = [
    "ArchiveLimits",
    "CellSpan",
    "ExtractedParagraph",
    "ExtractedTable",
    "PaperExtraction",
    "SourceTooLarge",
    "SubTable",
    "UnsafeArchiveError",
    "extract_directory",
    "extract_paper",
    "unpack_archive",
]

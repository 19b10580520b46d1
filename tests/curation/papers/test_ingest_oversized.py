"""Issue 19.3: a source file over the 20 MB a LaTeX file may have is refused with a message, never silently cut
(before, a 45 MB .tex was read as its first 20 MB and stored as a paper that ends early). Nothing is written."""

from __future__ import annotations

import pytest

from curation.errors import InvalidInput
from curation.latex import SourceTooLarge, extract_paper
from curation.latex.sources import MAX_FILE_BYTES
from curation.models import Paper
from curation.papers.services import paper_ingest
from tests.curation.papers.ingest_helpers import PAPER

FILLER = "% filler line of a huge comment block\n"


def huge_tex(path, *, bytes_over: int = 1024):
    body = PAPER.encode()
    repeats = (MAX_FILE_BYTES - len(body) + bytes_over) // len(FILLER) + 1
    path.write_bytes(body + FILLER.encode() * repeats)
    assert path.stat().st_size > MAX_FILE_BYTES
    return path


def test_extracting_an_oversized_tex_raises_instead_of_cutting(tmp_path):
    with pytest.raises(SourceTooLarge, match="at most 20 MB"):
        extract_paper(huge_tex(tmp_path / "main.tex"))


def test_a_tex_of_exactly_the_limit_is_read_whole(tmp_path):
    path = tmp_path / "main.tex"
    path.write_bytes(PAPER.encode() + b"%" * (MAX_FILE_BYTES - len(PAPER.encode())))
    assert path.stat().st_size == MAX_FILE_BYTES
    assert extract_paper(path).tables  # read, not refused


def test_ingesting_an_oversized_tex_is_refused_with_its_reason_and_stores_nothing(project, tmp_path):
    with pytest.raises(InvalidInput) as refused:
        paper_ingest(project=project, actor=None, path_or_upload=huge_tex(tmp_path / "big.tex"))
    assert "big.tex" in str(refused.value) and "refused rather than read cut short" in str(refused.value)
    assert not Paper.objects.exists()

"""Helpers for the LaTeX extractor tests: fixture paths and extraction of inline LaTeX."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from curation.latex import PaperExtraction, extract_paper

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def extract_latex(tmp_path: Path) -> Callable[[str], PaperExtraction]:
    def extract(body: str, preamble: str = "") -> PaperExtraction:
        source = f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
        path = tmp_path / "paper.tex"
        path.write_text(source, encoding="utf-8")
        return extract_paper(path)

    return extract

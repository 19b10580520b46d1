"""Plain-data results of extracting a paper: tables, paragraphs and what went wrong on the way."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CellSpan:
    """A \\multicolumn/\\multirow cell: `rows[row][cell]` holds the text; the block's top-left is (top, column)."""

    row: int
    cell: int
    column: int
    top: int
    rowspan: int
    colspan: int


@dataclass
class SubTable:
    """A subtable (or one of several tabulars) of a table float and the slice of `rows` it contributed.

    For a float holding several tabulars outside subtables, `caption` is the text a reader sees between the
    previous tabular and this one (often a "(b) …" line), and `header_rows` counts this grid's own header.
    """

    label: str | None
    caption: str
    number: str | None
    first_row: int
    row_count: int
    header_rows: int = 0


@dataclass
class ExtractedTable:
    """One live table float in document order.

    `header_rows` counts the leading rows of `rows` that form the header (of the first grid when the float
    holds several, see `subtables`); 0 when the table has no rows (a float holding an image).
    """

    index: int
    label: str | None
    caption: str
    rows: list[list[str]]
    env: str
    kind: str
    file: str
    in_appendix: bool
    number: str | None = None
    labels: list[str] = field(default_factory=list)
    section: str = ""
    raw: str = ""
    spans: list[CellSpan] = field(default_factory=list)
    grid: list[list[str]] = field(default_factory=list)
    subtables: list[SubTable] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    caption_references: list[str] = field(default_factory=list)
    cell_references: list[str] = field(default_factory=list)
    header_rows: int = 0  # leading grid rows forming the header


@dataclass
class ExtractedParagraph:
    """One TeX paragraph of body text; `mentions` are the table labels it references, `tables` their indices."""

    index: int
    text: str
    section: str
    section_number: str
    in_appendix: bool
    file: str
    mentions: list[str] = field(default_factory=list)
    tables: list[int] = field(default_factory=list)
    references: list[str] = field(default_factory=list)


@dataclass
class PaperExtraction:
    """Everything extracted from one paper source; `dataclasses.asdict` of it has the keys of `extract_paper --json`."""

    main_file: str
    title: str = ""
    tables: list[ExtractedTable] = field(default_factory=list)
    paragraphs: list[ExtractedParagraph] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    unused_files: list[str] = field(default_factory=list)
    main_file_candidates: list[str] = field(default_factory=list)

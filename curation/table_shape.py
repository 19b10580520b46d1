"""The one table representation (grid, spans, header rows, label, caption, number) and its renderers.

Pure Python, no Django: every consumer — HTML pages, drafting and scoring prompts (`prompt_text`, one rendering
for both), both ToolBoxes, the release freeze and every exporter — builds a `TableShape` from whatever it holds (an
extraction result, an ORM row, a frozen release dict) and renders from it, so a table cannot come out in two shapes.

Conventions:
- `grid` is rectangular and a merged cell's text fills every position it covers (what flattening a header needs).
- Files get `file_grid()`: rectangular, a merged cell's text once at its top-left position, covered positions
  empty — the layout TAT-QA's own tables use (`["", "Domestic", "", "International", ""]`).
- Prompts get `prompt_columns()` over `body_rows()`: one column name per grid column, multi-row headers
  joined with " - " (`LAS on test - Wolof`), repeated parts written once (`Avg.`, not `Avg. - Avg.`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import product

TYPE_CHECKING = False  # `typing` for type checkers only: the LaTeX extractor's fresh process would pay for it
if TYPE_CHECKING:
    from typing import Any

HEADER_JOINER = " - "


def prompt_cell(text: Any, limit: int | None = None) -> str:
    text = re.sub(r"\s+", " ", str(text)).strip().replace("|", "/")
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Span:
    """A merged block: its top-left position in the grid and how far it reaches."""

    top: int
    column: int
    rowspan: int = 1
    colspan: int = 1

    def covered(self) -> list[tuple[int, int]]:
        """Every (row, column) position the block covers, its top-left first."""
        return list(product(range(self.top, self.top + self.rowspan), range(self.column, self.column + self.colspan)))


def _clip_spans(spans: Sequence[Span], height: int, width: int) -> list[Span]:
    """Spans inside the grid, clipped to it; a span overlapping an earlier one is dropped (malformed sources)."""
    kept: list[Span] = []
    covered: set[tuple[int, int]] = set()
    for span in spans:
        if span.top >= height or span.column >= width or span.top < 0 or span.column < 0:
            continue
        rowspan = max(1, min(span.rowspan, height - span.top))
        colspan = max(1, min(span.colspan, width - span.column))
        clipped = Span(span.top, span.column, rowspan, colspan)
        cells = set(clipped.covered())
        if (rowspan == 1 and colspan == 1) or cells & covered:
            continue
        kept.append(clipped)
        covered |= cells
    return kept


def spans_from_dicts(spans: Sequence[Mapping[str, Any]] | None) -> list[Span]:
    """Spans as stored ({top or row, column, rowspan, colspan}); entries without numbers are skipped."""
    result = []
    for span in spans or []:
        try:
            top, column = int(span.get("top", span.get("row", 0))), int(span.get("column", 0))
            result.append(Span(top, column, int(span.get("rowspan", 1)), int(span.get("colspan", 1))))
        except (TypeError, ValueError, AttributeError):
            continue
    return result


def header_reach(spans: Sequence[Any], count: int) -> int:
    """`count` header rows widened until no \\multirow starting above their edge reaches below it (a rowspan may not
    cross from <thead> into <tbody>: browsers cut it at the section edge). Spans need only `top` and `rowspan`."""
    changed = True
    while changed:
        changed = False
        for span in spans:
            if span.top < count < span.top + span.rowspan:
                count = span.top + span.rowspan
                changed = True
    return count


_CAPTION_NUMBER = re.compile(r"^\s*Table\s+([A-Z]?\d+(?:\.\d+)?)\b", re.IGNORECASE)


def _clean(text: Any) -> str:
    return re.sub(r"\s+", " ", str(text if text is not None else "")).strip()


@dataclass(frozen=True)
class TableShape:
    """A table as every consumer sees it. Build it with one of the `shape_from_*` constructors."""

    grid: list[list[str]]
    spans: list[Span] = field(default_factory=list)
    header_rows: int = 0
    label: str = ""
    caption: str = ""
    number: str = ""

    @property
    def height(self) -> int:
        return len(self.grid)

    @property
    def width(self) -> int:
        return len(self.grid[0]) if self.grid else 0

    # --- Files --------------------------------------------------------------------------------------------

    def file_grid(self) -> list[list[str]]:
        """Rectangular rows for files: a merged cell's text at its top-left only, the positions it covers empty."""
        rows = [list(row) for row in self.grid]
        for span in self.spans:
            for r, c in span.covered()[1:]:
                rows[r][c] = ""
        return rows

    def to_frozen(self) -> dict[str, Any]:
        """What a release freezes of a table: the file grid as `cells`, plus grid, spans and header rows."""
        return {
            "label": self.label,
            "number": self.number,
            "caption": self.caption,
            "cells": self.file_grid(),
            "grid": [list(row) for row in self.grid],
            "spans": [asdict(span) for span in self.spans],
            "header_rows": self.header_rows,
        }

    # --- Prompts and tool boxes ---------------------------------------------------------------------------

    def prompt_header_rows(self) -> int:
        """Header rows a prompt flattens into column names: at least one whenever the table has a body row."""
        return self.header_rows if self.header_rows else (1 if self.height > 1 else 0)

    def prompt_columns(self) -> list[str]:
        """One name per column: the header rows' texts top to bottom, each part once, joined with " - "."""
        header = self.grid[: self.prompt_header_rows()]
        return [
            HEADER_JOINER.join(dict.fromkeys(part for row in header if (part := _clean(row[column]))))
            for column in range(self.width)
        ]

    def body_rows(self) -> list[list[str]]:
        """The data rows under the header, rectangular; a merged data cell repeats its text (a reader's reading)."""
        return [list(row) for row in self.grid[self.prompt_header_rows() :]]

    def prompt_rows(self) -> list[list[str]]:
        """The rectangular table a prompt shows: the flattened header row, then the body rows."""
        if self.prompt_header_rows() == 0:
            return [list(row) for row in self.grid]
        return [self.prompt_columns(), *self.body_rows()]

    def prompt_text(self, position: int = 0, *, max_rows: int | None = None, cell_chars: int | None = None) -> str:
        """The table as every prompt shows it (drafting and scoring alike): its reader name and label over its
        caption, then `prompt_rows()` as pipe-separated lines; a model with a small window gets `max_rows` rows and
        cells cut to `cell_chars`."""
        title = self.reader_name(position) + (f" ({self.label})" if self.label else "")
        lines = [f"{title}: {prompt_cell(self.caption, cell_chars and 5 * cell_chars)}" if self.caption else title]
        rows = self.prompt_rows()
        for row in rows[:max_rows]:
            lines.append("| " + " | ".join(prompt_cell(cell, cell_chars) for cell in row) + " |")
        if max_rows is not None and len(rows) > max_rows:
            lines.append(f"| … {len(rows) - max_rows} more rows |")
        return "\n".join(lines)

    def tool_input(self, label: str | None = None, position: int = 0) -> dict[str, Any]:
        """The table as a ToolBox reads it: one flattened header row over the body rows, under its reader name, with
        the body positions (row, column) a cell merged across columns covers, where its text repeats."""
        head = self.prompt_header_rows()
        merged = {(r - head, c) for span in self.spans if span.colspan > 1 for r, c in span.covered() if r >= head}
        return {
            "label": label if label is not None else self.display_label(position),
            "name": self.reader_name(position),
            "caption": self.caption,
            "rows": self.prompt_rows(),
            "header_rows": 1,
            "merged": sorted(merged),
        }

    def reader_name(self, position: int = 0) -> str:
        """What the paper calls the table, as questions write it: "Table 2" from its number (the LaTeX counter),
        else from a caption that starts "Table 2", else from its place (`position`, from 0)."""
        if self.number:
            return f"Table {self.number}"
        captioned = _CAPTION_NUMBER.match(self.caption or "")
        if captioned:
            return f"Table {captioned.group(1)}"
        return f"Table {position + 1}"

    def display_label(self, position: int = 0) -> str:
        """The name a prompt or tool box uses: the LaTeX label, else the reader name (`Table N`)."""
        return self.label or self.reader_name(position)

    # --- HTML ---------------------------------------------------------------------------------------------

    def html_layout(self) -> list[list[dict[str, Any]]]:
        """Rows of cells {text, rowspan, colspan, row, column}; positions a span covers are left out."""
        starts = {(s.top, s.column): s for s in self.spans}
        covered = {position for s in self.spans for position in s.covered()[1:]}
        layout = []
        for r, row in enumerate(self.grid):
            cells = []
            for c, text in enumerate(row):
                if (r, c) not in covered:
                    span = starts.get((r, c), Span(r, c))
                    cells.append(
                        {"text": text, "rowspan": span.rowspan, "colspan": span.colspan, "row": r, "column": c}
                    )
            layout.append(cells)
        return layout

    def html_header_rows(self) -> int:
        """Rows drawn in <thead>: the header rows, widened so no rowspan crosses into the body."""
        count = header_reach(self.spans, self.header_rows)
        return 0 if count >= self.height else count


def row_names(body: Sequence[Sequence[str]]) -> tuple[list[str], int]:
    """Each body row's name, from the leading columns that identify it, and how many leading columns that takes.

    The first column names the rows, except: a column of row numbers (1, 2, 3 …) before a column of text names
    none; and a first column that repeats (a `\\multirow` group label: "LLM", "Payload") names a row only with the
    text columns after it: those alone when they tell the rows apart ("Kimi-K2.6"), else with the group in
    parentheses ("small, PID (Free Hover)"). Names may still repeat or be empty; callers make them unique.
    """
    if not body or not body[0]:
        return [], 0

    def column(index: int) -> list[str]:
        return [_clean(row[index]) if index < len(row) else "" for row in body]

    def is_text(index: int) -> bool:
        cells = [cell for cell in column(index) if cell]
        return bool(cells) and sum(not _NUMERIC.match(cell) for cell in cells) * 2 > len(cells)

    def is_unique(names: list[str]) -> bool:
        given = [name for name in names if name]
        return len(set(given)) == len(given)

    width = max(len(row) for row in body)
    first = 0
    numbers = column(0)
    if width > 2 and is_text(1) and numbers[:1] in (["0"], ["1"]):
        start = int(numbers[0])
        first = int(numbers == [str(start + offset) for offset in range(len(body))])
    groups = column(first)
    names, taken = groups, first + 1
    details: list[int] = []
    for index in range(first + 1, width):
        if is_unique(names) or not is_text(index):
            break
        details.append(index)
        parts = [", ".join(cell for cell in cells if cell) for cells in zip(*map(column, details), strict=True)]
        if is_unique(parts) and all(parts):
            return parts, index + 1
        names = [
            f"{part} ({group})" if part and group else part or group for part, group in zip(parts, groups, strict=True)
        ]
        taken = index + 1
    return names, taken


_NUMERIC = re.compile(r"^[-+−–~≈∼<>(]*[$€£]?\.?\d[\d.,]*")
# A scale note's exception ("in thousands, except per share amounts"), and a cell that is nothing but a scale note:
# "$ MILLION", "In thousands", "US$'000", "(RM million)", "£m"; the group that matches names the scale.
EXCEPT = re.compile(r"\bexcept\b[^)]*", re.IGNORECASE)
_SCALE_ONLY = re.compile(
    r"^\W*(?:(?:amounts?|all|figures|dollars|in|of|u\.?s\.?|usd|eur|gbp|aud|cad|rm|rmb|hk|s|a|nz|[$€£¥])\W*)*"
    r"(?:(?P<thousand>thousands?|['’]?000s?)|(?P<million>millions?|mn?)|(?P<billion>billions?|bn))"
    r"\W*(?:(?:of|u\.?s\.?|dollars?|usd|euros?)\W*)*$",
    re.IGNORECASE,
)


def scale_note(text: str) -> re.Match | None:
    """`text` as nothing but a scale note, its exception aside: the match, whose group names the scale; else None."""
    return _SCALE_ONLY.match(EXCEPT.sub("", text).strip())


_PERIOD = re.compile(r"(?:.*\b)?(?:19|20)\d\d(?:/\d\d(?:\d\d)?)?\b.*")


def _label_spans(rows: list[list[str]], header_rows: int) -> list[Span]:
    """The merges a report's header rows lost: above the last header row, a label ("Years Ended December 31,") covers
    the empty cells after it, up to the next label, over headings of one kind: periods ("2019", "2018") under a
    period's label, names ("Actual", "Constant") under "Percent Change", not the "2018" after them."""
    spans = []
    for top, row in enumerate(rows[: header_rows - 1]):
        is_period = [bool(_PERIOD.fullmatch(_clean(cell))) for cell in rows[top + 1]]
        labels = [column for column in range(1, len(row)) if row[column].strip()]
        for column, end in zip(labels, [*labels[1:], len(row)], strict=False):  # each label to the next, or the edge
            reach = column + 1
            while reach < end and is_period[reach] == is_period[column]:
                reach += 1
            if reach - column > 1:
                spans.append(Span(top, column, 1, reach - column))
    return spans


def _reads_as_header(row: Sequence[str]) -> bool:
    """A row with no name of its own (or only a scale note, "($ in millions)") over names or periods, no amounts."""
    name, cells = _clean(row[0]) if row else "", [_clean(cell) for cell in row[1:] if _clean(cell)]
    if (name and not scale_note(name)) or not cells:
        return False
    # One cell alone is a section's title ("Consolidated Statements of Operations Data:") unless a period or a scale.
    if len(cells) == 1 and not (_PERIOD.fullmatch(cells[0]) or scale_note(cells[0])):
        return False
    return all(_PERIOD.fullmatch(cell) or not _NUMERIC.match(cell) for cell in cells)


def _names_the_columns(above: Sequence[str], row: Sequence[str]) -> bool:
    """A row naming every column ("Contractual Obligations | Total | Less than 1 Year | 1-3 Years") under a row of
    group labels only ("| | | Payments Due By Period | |", or under a scale note): the header's last row, its first
    cell naming the rows; periods name columns, amounts ("$  160") do not."""
    cells = [_clean(cell) for cell in row[1:]]
    return (
        (not _clean(above[0]) or bool(scale_note(above[0])))
        and any(not _clean(cell) for cell in above[1:])
        and len(cells) > 1
        and all(cells)
        and all(
            _PERIOD.fullmatch(cell) or not _NUMERIC.fullmatch(re.sub(r"\s", "", cell).rstrip("%)")) for cell in cells
        )
    )


def shape_from_rows(
    grid: Sequence[Sequence[Any]],
    *,
    spans: Sequence[Span] = (),
    header_rows: int | None = None,
    label: str | None = "",
    caption: str | None = "",
    number: str | None = "",
) -> TableShape:
    """The shape of a grid (ragged rows are padded); `header_rows=None` falls back to the span-based count."""
    width = max((len(row) for row in grid), default=0)
    rows = [[str(cell) if cell is not None else "" for cell in row] + [""] * (width - len(row)) for row in grid]
    clipped = _clip_spans(list(spans), len(rows), width)
    for span in clipped:
        # A merged cell's text fills every position it covers (a file grid leaves them empty: refill them).
        text = rows[span.top][span.column]
        for r, c in span.covered():
            if not rows[r][c]:
                rows[r][c] = text
    if header_rows is None:
        # Row one, plus any rows its \multirow cells reach down into (none if that is every row), plus the rows under
        # it that read as headers (a report's "| | 2019 | 2018 |" under "| | Years Ended December 31, | |").
        reach = header_reach(clipped, 1)
        while reach < len(rows) - 1 and (
            _reads_as_header(rows[reach]) or _names_the_columns(rows[reach - 1], rows[reach])
        ):
            reach += 1
        header_rows = 0 if reach >= len(rows) else reach
        if not clipped:  # a grid without its merges (an imported report): a label reaches over the empty cells after it
            clipped = _label_spans(rows, header_rows)
            for span in clipped:
                for r, c in span.covered():
                    rows[r][c] = rows[span.top][span.column]
    header_rows = max(0, min(int(header_rows), max(len(rows) - 1, 0)))
    return TableShape(rows, clipped, header_rows, label or "", caption or "", number or "")


def shape_from_extracted(table: Any) -> TableShape:
    """From `curation.latex.results.ExtractedTable`: its grid (or rows) and spans, and `header_rows` if known."""
    spans = [Span(s.top, s.column, s.rowspan, s.colspan) for s in table.spans] if table.grid else []
    return shape_from_rows(
        table.grid or table.rows,
        spans=spans,
        header_rows=getattr(table, "header_rows", None),
        label=table.label,
        caption=table.caption,
        number=table.number,
    )


def shape_from_row(table: Any) -> TableShape:
    """From a `curation.models.Table` row, read as a frozen table: its grid and spans (or plain cells), and
    `header_rows` when stored."""
    fields = ("grid", "cells", "spans", "header_rows", "label", "caption", "number")
    return shape_from_frozen({name: getattr(table, name, None) for name in fields})


def shape_from_frozen(data: Mapping[str, Any]) -> TableShape:
    """From a frozen release table; releases cut before grids were frozen hold only `cells` (padded here)."""
    has_grid = bool(data.get("grid"))
    return shape_from_rows(
        data["grid"] if has_grid else data.get("cells") or data.get("rows") or [],
        spans=spans_from_dicts(data.get("spans")) if has_grid else [],
        header_rows=data.get("header_rows"),
        label=data.get("label"),
        caption=data.get("caption"),
        number=data.get("number"),
    )


def is_rectangular(rows: Sequence[Sequence[Any]], width: int | None = None) -> bool:
    """Every row has the same length (and that length is `width`, when given)."""
    lengths = {len(row) for row in rows}
    return len(lengths) <= 1 and (width is None or not rows or lengths == {width})

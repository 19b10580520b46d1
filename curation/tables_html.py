"""Lay a stored table out for HTML: the rectangular grid with each span drawn once, with row/col spans."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def table_layout(grid: Sequence[Sequence[str]], spans: Sequence[Mapping[str, Any]] = ()) -> list[list[dict[str, Any]]]:
    """Rows of cells {text, rowspan, colspan, row, column}; positions a span covers are left out."""
    if not grid:
        return []
    height, width = len(grid), max(len(row) for row in grid)
    starts: dict[tuple[int, int], tuple[int, int]] = {}
    covered: set[tuple[int, int]] = set()
    for span in spans:
        top, column = int(span.get("top", span.get("row", 0))), int(span.get("column", 0))
        rowspan = max(1, min(int(span.get("rowspan", 1)), height - top))
        colspan = max(1, min(int(span.get("colspan", 1)), width - column))
        if (top, column) in covered or top >= height or column >= width:
            continue  # overlapping or out-of-grid spans from malformed sources are ignored
        starts[(top, column)] = (rowspan, colspan)
        covered.update((r, c) for r in range(top, top + rowspan) for c in range(column, column + colspan))
    layout = []
    for r in range(height):
        row = []
        for c in range(width):
            text = grid[r][c] if c < len(grid[r]) else ""
            if (r, c) in starts:
                rowspan, colspan = starts[(r, c)]
                row.append({"text": text, "rowspan": rowspan, "colspan": colspan, "row": r, "column": c})
            elif (r, c) not in covered:
                row.append({"text": text, "rowspan": 1, "colspan": 1, "row": r, "column": c})
        layout.append(row)
    return layout


def layout_for(table: Any) -> list[list[dict[str, Any]]]:
    """Layout of a Table row: its grid and spans, or its plain cells when it has no grid."""
    grid = table.grid or table.cells
    return table_layout(grid, table.spans if table.grid else ())


def header_row_count(spans: list[dict[str, object]], row_count: int) -> int:
    """How many leading rows form the header: row one, plus any rows its \\multirow cells reach down into."""
    count = 1
    changed = True
    while changed:
        changed = False
        for span in spans or []:
            try:
                top, rowspan = int(span["top"]), int(span["rowspan"])  # type: ignore[call-overload]
            except (KeyError, TypeError, ValueError):
                continue
            # A rowspan may not cross from <thead> into <tbody>: browsers cut it at the section edge.
            if top < count < top + rowspan:
                count = top + rowspan
                changed = True
    return 0 if count >= row_count else count

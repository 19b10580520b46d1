"""Tabular environments to rows of cell strings, with spans, hidden columns and a rectangular grid."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import accumulate

from curation.latex.headers import MAX_HEADER_ROWS, PARTIAL_RULES, header_rows, is_number
from curation.latex.macros import substitute
from curation.latex.results import CellSpan
from curation.latex.text import (
    RULE_COMMANDS,
    TextRenderer,
    latex_to_text,
    normalize_space,
    siunitx_number,
    space_operators,
    tabular_parts,
)
from curation.latex.tokens import ALIGN, CHAR, CS, PAR, SPACE, Token, serialize
from curation.latex.tree import Env, Group, Node, NodeCursor, build_tree, flatten, has_content, to_latex

_ROW_ENDS = frozenset({"\\", "tabularnewline", "cr", "crcr"})
_LONGTABLE_MARKS = frozenset({"endfirsthead", "endhead", "endfoot", "endlastfoot"})
_HIDING = re.compile(r"\\(setbox|lrbox|iffalse|comment|gobble|@gobble|hide|Gobble)(?![a-zA-Z])")
_SPAN_MACROS = frozenset({"multicolumn", "multirow", "multirowcell", "Block", "multicolumnrow"})


@dataclass
class ParsedTabular:
    """Rows, spans and grid of one tabular."""

    rows: list[list[str]]
    spans: list[CellSpan]
    grid: list[list[str]]
    references: list[str] = field(default_factory=list)
    # The rules drawn above each row (`midrule`, `cline`, …), and below the last one.
    rules_before: list[tuple[str, ...]] = field(default_factory=list)
    rules_after: tuple[str, ...] = ()
    # The columns (from 0, first and last) a partial rule above each row underlines (`\\cmidrule{3-5}`: (2, 4)).
    ranges_before: list[tuple[tuple[int, int], ...]] = field(default_factory=list)
    header_rows: int = 0
    # Rows of a longtable's last foot (above `\\endlastfoot`): notes printed under the table, not rows of it.
    foot_rows: list[list[list[Node]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Column:
    """One column of a column specification: whether its content is swallowed, whether siunitx sets it (`S`)."""

    hidden: bool = False
    siunitx: bool = False
    # What an `@{…}` before the column prints between it and the previous one (`r@{.}l`, `S@{${}\pm{}$}S`):
    # the two read as one cell, `12345.6`, `85.6 ± 0.3`.
    joined_by: str = ""


def column_specs(spec: list[Node], column_types: dict[str, tuple[int, list[Token]]], depth: int = 0) -> list[Column]:
    """The columns of a column specification, `\\newcolumntype` columns and `*{n}{…}` repeats expanded."""
    flags: list[Column] = []
    separator = ""
    if depth > 10:
        return flags
    cursor = NodeCursor(spec)
    while (node := cursor.next()) is not None:
        if not (isinstance(node, Token) and node.kind == CHAR):
            continue
        text = node.text
        for position, letter in enumerate(text):
            last = position == len(text) - 1
            if letter in " |:;,.!@<>" or letter.isdigit():
                if letter in "!@<>" and last:
                    argument = cursor.argument() or []
                    printed = latex_to_text(to_latex(argument)) if letter == "@" and flags else ""
                    separator = (
                        printed if printed and len(printed) <= 3 and not any(c.isalpha() for c in printed) else ""
                    )
                continue
            if letter == "*":
                if last:
                    count = _to_int(to_latex(cursor.argument() or []), 1)
                    inner = column_specs(cursor.argument() or [], column_types, depth + 1)
                    flags.extend(inner * max(0, min(count, 100)))
                continue
            if letter in column_types:
                count, body = column_types[letter]
                arguments = [cursor.argument() or [] for _ in range(count)] if last else []
                hidden = bool(_HIDING.search(serialize(body)))
                expanded = build_tree(flatten(substitute(body, arguments)), [])
                inner = column_specs(expanded, column_types, depth + 1) or [Column()]
                flags.extend(Column(hidden or column.hidden, column.siunitx) for column in inner)
                continue
            flags.append(Column(siunitx=letter == "S", joined_by=separator))
            separator = ""
            if last:
                cursor.optional()
                while isinstance(cursor.peek(), Group):
                    cursor.next()
    return flags


def _to_int(text: str, default: int) -> int:
    match = re.search(r"-?\d+", text)
    return int(match.group()) if match else default


def _split_rows(nodes: list[Node], result: ParsedTabular) -> list[tuple[list[list[Node]], tuple[str, ...], tuple]]:
    """Raw rows of cells, each with the rules drawn above it and the column ranges of its partial rules; rules
    below the last row go to `result`."""
    rows: list[tuple[list[list[Node]], tuple[str, ...], tuple]] = []
    pending_rules: list[str] = []
    pending_ranges: list[tuple[int, int]] = []
    row: list[list[Node]] = []
    cell: list[Node] = []
    kept_until = 0
    has_first_head = False
    cursor = NodeCursor(nodes)

    def end_row() -> None:
        nonlocal row, cell, pending_rules, pending_ranges
        rows.append(([*row, cell], tuple(pending_rules), tuple(pending_ranges)))
        row, cell, pending_rules, pending_ranges = [], [], [], []

    while (node := cursor.next()) is not None:
        if isinstance(node, Token):
            if node.kind == ALIGN:
                row.append(cell)
                cell = []
                continue
            if node.kind == CS and node.name in _ROW_ENDS:
                cursor.arguments("*[")
                end_row()
                continue
            if node.kind == CS and node.name in RULE_COMMANDS:
                reach = _skip_rule(node.name, cursor)
                if not row and not has_content(cell):
                    pending_rules.append(node.name)
                    pending_ranges.extend([reach] if reach else [])
                continue
            if node.kind == CS and node.name in _LONGTABLE_MARKS:
                if row or has_content(cell):
                    end_row()
                # Longtable repeats heads and feet on every page; a reader sees the first head and last foot once.
                if node.name == "endlastfoot":
                    result.foot_rows.extend(cells for cells, _, _ in rows[kept_until:])
                if node.name != "endfirsthead" and (node.name != "endhead" or has_first_head):
                    del rows[kept_until:]
                has_first_head = has_first_head or node.name == "endfirsthead"
                kept_until = len(rows)
                continue
            if node.is_cs("caption", "label"):  # a longtable's own: read by the document walker
                cursor.arguments("*[{")
                continue
            if node.kind == PAR:
                cell.append(Token(SPACE, " "))
                continue
        cell.append(node)
    if row or has_content(cell):
        end_row()
    result.rules_after = tuple(pending_rules)
    return rows


def _skip_rule(name: str, cursor: NodeCursor) -> tuple[int, int] | None:
    """Consume a rule's arguments; the columns a partial rule underlines (`\\cmidrule(lr){3-5}`: (2, 4))."""
    cursor.optional("(", ")")
    cursor.optional()
    reach = None
    for _ in range(RULE_COMMANDS[name]):
        if name in ("cmidrule", "cmidrulec"):
            cursor.optional("(", ")")
        argument = to_latex(cursor.argument() or [])
        if name in PARTIAL_RULES and (found := re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", argument)):
            reach = reach or (int(found.group(1)) - 1, int(found.group(2)) - 1)
    cursor.optional()
    return reach


def _extract_span(nodes: list[Node]) -> tuple[list[Node], int, int]:
    out: list[Node] = []
    colspan = rowspan = 1
    cursor = NodeCursor(nodes)
    while (node := cursor.next()) is not None:
        if isinstance(node, Token) and node.kind == CS and node.name in _SPAN_MACROS:
            if node.name == "multicolumn":  # {columns}{type}{content}
                count, _, content = cursor.arguments("{{{")
                colspan = max(1, _to_int(to_latex(count), 1))
            elif node.name == "Block":  # [options]{rows-columns}{content}
                _, size, content = cursor.arguments("[{{")
                rowspan, colspan = [*(_to_int(part, 1) for part in to_latex(size).split("-")), 1, 1][:2]
            else:  # [position]{rows}[…]{width}[fixup]{content}, or without the width for \\multirowcell
                _, count, *_, content = cursor.arguments("[{[{[{" if node.name == "multirow" else "[{[{")
                rowspan = _to_int(to_latex(count), 1) or 1
            inner, inner_colspan, inner_rowspan = _extract_span(content)
            colspan = max(colspan, inner_colspan)
            rowspan = inner_rowspan if inner_rowspan != 1 else rowspan
            out.append(Group(inner))
            continue
        out.append(node)
    return out, colspan, rowspan


def parse_tabular(env: Env, renderer: TextRenderer, column_types: dict[str, tuple[int, list[Token]]]) -> ParsedTabular:
    """Rows as a reader sees them: rules and empty rows gone, spans recorded, hidden columns dropped."""
    spec, body = tabular_parts(env)
    columns = column_specs(spec, column_types) if env.name not in ("tblr", "longtblr", "talltblr") else []
    hidden = [column.hidden for column in columns]
    joins = [index for index, column in enumerate(columns) if column.joined_by]
    result = ParsedTabular(rows=[], spans=[], grid=[])
    rendered: list[tuple[list[str], list[tuple[int, int, int, int]]]] = []
    carried: list[str] = []
    carried_ranges: list[tuple[int, int]] = []
    for raw_row, rules, ranges in _split_rows(body, result):
        carried.extend(rules)
        carried_ranges.extend(ranges)
        cells: list[str] = []
        row_spans: list[tuple[int, int, int, int]] = []
        column = 0
        for raw_cell in raw_row:
            content, colspan, rowspan = _extract_span(raw_cell)
            start = column
            column += colspan
            covered = sum(hidden[start : start + colspan])
            if colspan == 1 and covered:
                continue
            colspan -= covered + sum(1 for index in joins if start < index < start + colspan)
            visible_start = start - sum(hidden[:start]) - sum(1 for index in joins if index <= start)
            text = renderer.render(content, result.references, in_cell=True)
            # `S` columns print numbers; a \multicolumn cell is set by its own column type, not by siunitx.
            own_type = any(isinstance(node, Token) and node.is_cs("multicolumn") for node in raw_cell)
            if colspan == 1 and start < len(columns) and columns[start].siunitx and not own_type:
                text = space_operators(siunitx_number(text))
            if start in joins and cells and colspan == 1 and rowspan == 1:
                left = cells.pop()
                text = (
                    space_operators(normalize_space(f"{left}{columns[start].joined_by}{text}")) if left or text else ""
                )
            if colspan != 1 or rowspan != 1:
                row_spans.append((len(cells), visible_start, rowspan, max(colspan, 1)))
            cells.append(text)
        if any(cells):
            rendered.append((cells, row_spans))
            result.rules_before.append(tuple(carried))
            result.ranges_before.append(tuple(carried_ranges))
            carried, carried_ranges = [], []
    # A rule above rows a reader does not see (empty ones) is drawn where the next visible row starts.
    result.rules_after = (*carried, *result.rules_after)
    result.rows = [cells for cells, _ in rendered]
    for row_index, (_, row_spans) in enumerate(rendered):
        for cell_index, column, rowspan, colspan in row_spans:
            top = row_index + rowspan + 1 if rowspan < 0 else row_index
            height = min(abs(rowspan), len(rendered) - top) if rowspan > 0 else row_index - max(top, 0) + 1
            result.spans.append(CellSpan(row_index, cell_index, column, max(top, 0), max(height, 1), colspan))
    for foot_row in result.foot_rows:
        cells = [renderer.render(_extract_span(cell)[0], result.references, in_cell=True) for cell in foot_row]
        if any(cells):
            result.notes.append(" ".join(cell for cell in cells if cell))
    if not any(hidden) and not joins:  # ranges count the source's columns; these rows count the visible ones
        _spread_lone_labels(result)
    result.grid = build_grid(result.rows, result.spans)
    result.header_rows = header_rows(result.rows, result.spans, result.rules_before)
    return result


def _spread_lone_labels(result: ParsedTabular) -> None:
    """A group label written without `\\multicolumn` over the columns a `\\cmidrule` under it groups (` & & False & &
    \\\\ \\cmidrule{2-4}`) spans them, as `\\multicolumn` would: a label alone in the range, in a row of the first few
    with no span, above the rule."""
    for index, row in enumerate(result.rows[:MAX_HEADER_ROWS]):
        if any(span.row == index for span in result.spans):
            continue
        below = [reach for ranges in result.ranges_before[index + 1 : MAX_HEADER_ROWS + 1] for reach in ranges]
        merged: list[str] = []
        spans: list[CellSpan] = []
        column = 0
        for first, last in sorted(set(below)):
            labels = [cell for cell in row[first : last + 1] if cell.strip()]
            if first < column or last >= len(row) or first == last or len(labels) != 1 or is_number(labels[0]):
                continue
            merged.extend(row[column:first])
            spans.append(CellSpan(index, len(merged), first, index, 1, last - first + 1))
            merged.append(labels[0])
            column = last + 1
        if spans:
            result.rows[index] = [*merged, *row[column:]]
            result.spans.extend(spans)


def build_grid(rows: list[list[str]], spans: list[CellSpan]) -> list[list[str]]:
    """A rectangular copy of `rows` where every position a span covers repeats the span's text."""
    colspans = {(span.row, span.cell): span.colspan for span in spans}
    # Where each cell starts, and after the last one where the row ends.
    starts = [
        list(accumulate((colspans.get((r, c), 1) for c in range(len(row))), initial=0)) for r, row in enumerate(rows)
    ]
    width = max((row_starts[-1] for row_starts in starts), default=0)
    grid = [[""] * width for _ in rows]
    for row_index, row in enumerate(rows):
        for cell_index, text in enumerate(row):
            grid[row_index][starts[row_index][cell_index]] = text
    for span in spans:
        text = rows[span.row][span.cell]
        for row_index in range(span.top, min(span.top + span.rowspan, len(rows))):
            for column in range(span.column, min(span.column + span.colspan, width)):
                if not grid[row_index][column]:
                    grid[row_index][column] = text
    return grid

"""How many leading rows of a tabular are its header, read the way a reader reads the rules and the cells."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from curation.latex.results import CellSpan
from curation.table_shape import header_reach

# Rules drawn across the whole table; one of them under the first rows is how authors close a header.
FULL_RULES = frozenset(
    {"hline", "toprule", "midrule", "Xhline", "specialrule", "hdashline", "Hline", "svhline", "thickhline",
     "hlineB", "midrulec", "toprulec", "firsthline", "hdottedline", "tabucline", "hhline"}
)  # fmt: skip
# Rules under part of the table (a group header's columns): the row below them is a sub-header.
PARTIAL_RULES = frozenset({"cmidrule", "cline", "cdashline", "cmidrulec", "clineB", "cdottedline"})
MAX_HEADER_ROWS = 5
_COLUMN_NUMBER = re.compile(r"^\((\d+)\)$")
_NUMBER = re.compile(
    r"^[~≈∼<>≤≥±+\-−–]?[$€£¥]?\(?\.?\d[\d.,]*([eE][-+−]?\d+)?\)?(%|[kKMBx×])?([±(][\d.,]+\)?|\+[\d.]+/[-−][\d.]+)?[*†‡]*$"
)


def is_number(text: str) -> bool:
    """Whether a cell reads as a number (`85.6`, `-0.5`, `12%`, `85.62 ± 0.09`, `1,024`, `(3.2)`, `2e-5`)."""
    compact = text.strip().replace(" ", "")
    return bool(compact) and compact not in ("-", "–", "—", "--", "---") and bool(_NUMBER.match(compact))


def header_rows(rows: Sequence[Sequence[str]], spans: Sequence[CellSpan], rules_before: Sequence[Sequence[str]]) -> int:
    """The number of header rows of one tabular (0 when it has none).

    `rules_before[i]` names the rules drawn above row i. The header ends at the first whole-width rule below
    row one (`\\midrule`, `\\hline`, or a `\\toprule` under a header written above it), unless the rows
    above that rule read as data; without such a rule it is row one, the rows its `\\multirow` cells reach,
    and the sub-header rows under a row of `\\multicolumn` groups or a `\\cmidrule`. A row holding one cell
    across the whole table is a group label of the body, never the last header row, except as a title on
    top ruled off from the column headers under it. A table whose first row already reads like the rows
    below it has no header.
    """
    count = len(rows)
    if count <= 1:  # a lone row is the table's only content: a header needs a body under it
        return 0
    return min(_header_rows(_filled(rows, spans, from_below=True), spans, rules_before), count - 1)


def _header_rows(
    rows: Sequence[Sequence[str]], spans: Sequence[CellSpan], rules_before: Sequence[Sequence[str]]
) -> int:
    count = len(rows)
    extra: Counter[int] = Counter()  # the columns each row's spans cover beyond their first
    for span in spans:
        extra[span.row] += span.colspan - 1
    width = max((len(row) + extra[index] for index, row in enumerate(rows)), default=0)
    closing = _full_rule_from(1, rules_before, count)
    if not spans and _is_data_row(rows[0]) and len({tuple(rules) for rules in rules_before[1:count]}) <= 1:
        return 0  # ruled alike between every two rows, a first row of a label and numbers is a body row
    if (
        rows[0]
        and rows[0][0].strip()
        and _is_group_label(rows[0], spans, 0, width)
        and any(_is_group_label(rows[index], spans, index, width) for index in range(1, count))
    ):
        return 0  # the first of several group labels across the table: the body starts at once, without a header
    if closing == 1 and count > 2 and _is_group_label(rows[0], spans, 0, width):
        # A title row across the table, ruled off from the column headers below it ("Top 5%"): the header
        # is the title plus the header of the rows under it.
        rest = [replace(span, row=span.row - 1, top=span.top - 1) for span in spans if span.top >= 1]
        return 1 + header_rows(rows[1:], rest, [(), *rules_before[2:]])
    if closing is not None and _closes_header(rows, spans, rules_before, closing):
        found = closing
        while found > 1 and _is_group_label(rows[found - 1], spans, found - 1, width):
            found -= 1
        if found == closing:
            found = _ruled_sub_header_end(rows, spans, rules_before, closing, width)
        return _reach(found, spans, count)
    if closing is None and _no_header(_filled(rows, spans)):
        return 0
    found = 1
    while found < min(count, MAX_HEADER_ROWS):
        row = rows[found]
        if _is_data_row(row) or _is_group_label(row, spans, found, width) or not any(c.strip() for c in row[1:]):
            break  # a row of numbers, or a label of the rows below it ("Headline treatment effects"): the body
        if not (_is_sub_header_position(found, spans, rules_before) or _reached(found, spans)):
            break
        found += 1
    return _reach(found, spans, count)


def _ruled_sub_header_end(
    rows: Sequence[Sequence[str]],
    spans: Sequence[CellSpan],
    rules_before: Sequence[Sequence[str]],
    closing: int,
    width: int,
) -> int:
    """Where the header ends when a second whole-width rule closes sub-header rows under the first one.

    `Model & \\multicolumn{2}{c}{Dev} \\\\ \\midrule & Acc & F1 \\\\ \\midrule`: the rows between the two rules
    are the header's second row when each sits under column groups or a `\\cmidrule`, leaves its first cell
    empty (a units row) or is reached by a `\\multirow` from a row above it (`\\multirow{-2}{*}{Dataset}`), and
    none of them reads as data; otherwise the first rule closes the header.
    """
    following = _full_rule_from(closing + 1, rules_before, len(rows))
    if following is None:
        return closing
    between = range(closing, following)
    if all(
        not _is_data_row(rows[index])
        and not _is_group_label(rows[index], spans, index, width)
        and any(cell.strip() for cell in rows[index])
        and (
            _is_sub_header_position(index, spans, rules_before)
            or not rows[index][0].strip()
            or any(closing <= span.top < index < span.top + span.rowspan for span in spans)
        )
        for index in between
    ):
        return following
    return closing


def _filled(rows: Sequence[Sequence[str]], spans: Sequence[CellSpan], *, from_below: bool = False) -> list[list[str]]:
    """Rows whose empty first cell a `\\multirow` covers read with that cell's text; `from_below`: only the rows
    above the one a `\\multirow{-2}` is written in."""
    filled = [list(row) for row in rows]
    for span in spans:
        if span.column == 0:
            end = span.row if from_below else min(span.top + span.rowspan, len(rows))
            for index in range(span.top, end):
                if filled[index] and not filled[index][0].strip():
                    filled[index][0] = rows[span.row][span.cell]
    return filled


def _full_rule_from(start: int, rules_before: Sequence[Sequence[str]], count: int) -> int | None:
    """The first row from `start` (within the first rows a header may take) with a whole-width rule above it."""
    reach = range(start, min(count, MAX_HEADER_ROWS + 1))
    return next((index for index in reach if _has(rules_before, index, FULL_RULES)), None)


def _has(rules_before: Sequence[Sequence[str]], index: int, kinds: frozenset[str]) -> bool:
    return index < len(rules_before) and any(rule in kinds for rule in rules_before[index])


def _is_data_row(row: Sequence[str]) -> bool:
    """A row with a label in its first cell and mostly numbers in the others (not a `(1) (2) (3)` numbering)."""
    if not row or not row[0].strip():
        return False
    values = [cell for cell in row[1:] if cell.strip()]
    numbers = sum(1 for cell in values if is_number(cell))
    return bool(values) and not _is_column_numbering(values) and numbers * 2 >= len(values)


def _is_column_numbering(values: Sequence[str]) -> bool:
    """`(1) & (2) & (3)`: the model numbers regression tables put under their headers."""
    numbers = [match.group(1) for value in values if (match := _COLUMN_NUMBER.match(value.strip()))]
    return len(values) >= 2 and len(numbers) == len(values) and numbers == [str(n + 1) for n in range(len(values))]


def _is_group_label(row: Sequence[str], spans: Sequence[CellSpan], index: int, width: int) -> bool:
    """One cell spanning the whole table (`\\multicolumn{5}{l}{Supervised}`) between other rows."""
    filled = [cell for cell in row if cell.strip()]
    spanning = any(span.row == index and span.colspan >= max(width - 1, 2) for span in spans)
    return len(filled) == 1 and spanning


def _reached(index: int, spans: Sequence[CellSpan]) -> bool:
    return any(span.top < index < span.top + span.rowspan and span.top == 0 for span in spans)


def _reach(found: int, spans: Sequence[CellSpan], count: int) -> int:
    """Extend the header down to the last row a header cell's \\multirow reaches (not over the whole table)."""
    reached = min(header_reach(spans, found), count)
    return found if reached >= count > found else reached


def _closes_header(
    rows: Sequence[Sequence[str]], spans: Sequence[CellSpan], rules_before: Sequence[Sequence[str]], closing: int
) -> bool:
    """Whether the first whole-width rule closes a header rather than setting off summary rows of the body.

    Every row above it must read as a header row: text, or numbers only where a sub-header sits (under a row
    of `\\multicolumn` groups or a `\\cmidrule`, as `Model & 1 & 5 & 10` under `Shots`).
    """
    return all(
        not _is_data_row(rows[index]) or _is_sub_header_position(index, spans, rules_before)
        for index in range(1, closing)
    )


def _is_sub_header_position(index: int, spans: Sequence[CellSpan], rules_before: Sequence[Sequence[str]]) -> bool:
    """Under a row of `\\multicolumn` groups, or under a `\\cmidrule` that is not drawn under every row."""
    under_groups = any(span.row == index - 1 and span.colspan > 1 for span in spans)
    return under_groups or (_has(rules_before, index, PARTIAL_RULES) and not _ruled_throughout(rules_before))


def _ruled_throughout(rules_before: Sequence[Sequence[str]]) -> bool:
    """Partial rules above most rows (a grid of `\\cline`s) say nothing about where the header ends."""
    ruled = sum(1 for index in range(1, len(rules_before)) if _has(rules_before, index, PARTIAL_RULES))
    return len(rules_before) > 3 and ruled * 2 > len(rules_before) - 1


def _no_header(rows: Sequence[Sequence[str]]) -> bool:
    """Without a rule under it, a first row of numbers like the rows below it is data (a key-value table)."""
    return len(rows) >= 2 and _is_data_row(rows[0]) and _is_data_row(rows[1]) and len(rows[0]) == len(rows[1])

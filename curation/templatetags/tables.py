"""Template tags for tables: `{% data_table table %}` renders a stored table as a real HTML table."""

from __future__ import annotations

import re
from collections import Counter

from django import template

from curation.table_shape import shape_from_row

register = template.Library()


def _comparable(text: str) -> str:
    """A cell or an answer item as compared for highlighting: no spaces, thousands commas, % or $ signs, case."""
    return re.sub(r"[\s,%$]", "", str(text)).lower()


# A number as a rationale quotes it: "72.8", "1,204", "-3.5", "12%" — not a table's number ("Table 1").
RATIONALE_NUMBER = re.compile(r"(?<![Tt]able )(?<![\d.,])-?\d[\d,]*(?:\.\d+)?%?")


def source_values(instance) -> set[str]:
    """What the answer was taken or computed from, as far as the text tells: its answer items and the numbers its
    rationale quotes (comparable form)."""
    values = [*(instance.answer or []), *RATIONALE_NUMBER.findall(instance.rationale or "")]
    return {_comparable(value) for value in values} - {""}


@register.inclusion_tag("curation/_data_table.html")
def data_table(table, highlight_ids=None, header_rows: int | None = None, answer=None):
    """The table; the cells of its first column are `first-col` (kept in view while it scrolls sideways), and with
    `answer` (an instance) the cells holding its answer items or the numbers its rationale quotes are `answer-cell`:
    the answer's source cells, as far as the text tells. A value the table holds in more than one cell (a 0, a
    repeated 12.5) tells no source apart, so none of its cells is marked."""
    shape = shape_from_row(table)
    rows = shape.html_layout()
    if header_rows is None:
        header_rows = shape.html_header_rows()
    wanted = source_values(answer) if answer is not None else set()
    held = Counter(_comparable(cell["text"]) for row in rows for cell in row)
    for row in rows:
        for cell in row:
            value = _comparable(cell["text"])
            cell["first"] = cell["column"] == 0
            cell["answer"] = value in wanted and held[value] == 1
    return {
        "table": table,
        "head": rows[:header_rows],
        "body": rows[header_rows:],
        "is_highlighted": bool(highlight_ids and table.pk in highlight_ids),
    }

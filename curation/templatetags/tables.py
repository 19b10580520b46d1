"""Template tags for tables: `{% data_table table %}` renders a stored table as a real HTML table."""

from __future__ import annotations

from django import template

from curation.table_shape import shape_from_row

register = template.Library()


@register.inclusion_tag("curation/_data_table.html")
def data_table(table, highlight_ids=None, header_rows: int | None = None):
    shape = shape_from_row(table)
    rows = shape.html_layout()
    if header_rows is None:
        header_rows = shape.html_header_rows()
    return {
        "table": table,
        "head": rows[:header_rows],
        "body": rows[header_rows:],
        "is_highlighted": bool(highlight_ids and table.pk in highlight_ids),
    }

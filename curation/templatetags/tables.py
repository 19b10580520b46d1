"""Template tags for tables: `{% data_table table %}` renders a stored table as a real HTML table."""

from __future__ import annotations

from django import template

from curation.tables_html import header_row_count, layout_for

register = template.Library()


@register.inclusion_tag("curation/_data_table.html")
def data_table(table, highlight_ids=None, header_rows: int | None = None):
    rows = layout_for(table)
    if header_rows is None:
        header_rows = header_row_count(table.spans if table.grid else [], len(rows))
    return {
        "table": table,
        "head": rows[:header_rows],
        "body": rows[header_rows:],
        "is_highlighted": bool(highlight_ids and table.pk in highlight_ids),
    }

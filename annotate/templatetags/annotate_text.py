"""`{% highlight_mentions paragraph %}`: the paragraph's text with its table references marked up."""

from __future__ import annotations

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_REFERENCE = re.compile(r"\b(Tables?|Tab\.)(\s+)(\d+[A-Za-z]?(?:(?:\s*,\s*|\s+and\s+|\s*&\s*)\d+[A-Za-z]?)*)")
_NUMBER = re.compile(r"\d+[A-Za-z]?")


@register.simple_tag
def highlight_mentions(paragraph) -> SafeString:
    """The paragraph's text, escaped, with each "Table N" whose N is a mentioned table wrapped in
    <mark data-table=id>. Uses the prefetched `mentioned_tables` (with `number`), so it adds no query per paragraph."""
    numbers = {t.number: t.pk for t in paragraph.mentioned_tables.all() if t.number}

    def mark_numbers(match: re.Match[str]) -> str:
        def mark(number: re.Match[str]) -> str:
            table_id = numbers.get(number.group(0))
            if table_id is None:
                return number.group(0)
            return f'<mark class="mention" data-table="{table_id}">{number.group(0)}</mark>'

        return match.group(1) + match.group(2) + _NUMBER.sub(mark, match.group(3))

    return mark_safe(_REFERENCE.sub(mark_numbers, escape(paragraph.text)))  # noqa: S308 - input escaped first

"""Find table mentions in a paragraph's rendered text, so the paper page can link each one to its table."""

from __future__ import annotations

import re
from dataclasses import dataclass

# What precedes a table number in rendered text: \\ref after "Table~", \\autoref and \\cref output.
MENTION_LEAD = re.compile(r"\b(?:tables?|tabs?\.|tbl\.|sub-?tables?)(?:\s|~)*", re.IGNORECASE)
MENTION_NUMBER = re.compile(r"[A-Z]?\d+(?:\.\d+)*[a-z]?(?![\w])")
MENTION_SEPARATOR = re.compile(r"\s*(?:,\s*(?:and\s+)?|and|&|to|–|—|-)\s*")


@dataclass(frozen=True)
class TextSegment:
    """A run of paragraph text; `table_id` is set when the run is a mention of that table."""

    text: str
    table_id: int | None = None


def mention_segments(text: str, numbers: dict[str, int]) -> list[TextSegment]:
    """Split text so each "Table N" number (N a key of `numbers`, the displayed table numbers) is its own segment."""
    segments: list[TextSegment] = []
    position = 0
    for lead in MENTION_LEAD.finditer(text):
        if lead.start() < position:
            continue
        cursor = lead.end()
        while number := MENTION_NUMBER.match(text, cursor):
            table_id = numbers.get(number.group(0))
            if table_id is not None:
                if number.start() > position:
                    segments.append(TextSegment(text[position : number.start()]))
                segments.append(TextSegment(number.group(0), table_id))
                position = number.end()
            separator = MENTION_SEPARATOR.match(text, number.end())
            if separator is None or not MENTION_NUMBER.match(text, separator.end()):
                break
            cursor = separator.end()
    if position < len(text):
        segments.append(TextSegment(text[position:]))
    return segments

"""TAT-QA's answer types and scales, and the suggestion of both from an answer, its rationale and its tables (pure)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

ANSWER_TYPES = ("span", "multi-span", "arithmetic", "count")
ANSWER_TYPE_LABELS = {"span": "Span", "multi-span": "Multi-span", "arithmetic": "Arithmetic", "count": "Count"}
SCALES = ("", "thousand", "million", "billion", "percent")
SCALE_LABELS = {"": "None", "thousand": "Thousand", "million": "Million", "billion": "Billion", "percent": "Percent"}

_NUMBER = re.compile(r"^[-−+(]?[$€£¥]?\s*\d[\d,]*(?:\.\d+)?\s*%?\)?$")
# An operation between two numbers ("87.3 - 81.0", "(2 + 3) / 2", "12 × 4") or a result line ("… = 6.3").
_OPERATION = re.compile(r"\d\s*\)?\s*[-−+*/×÷]\s*\(?\s*[$€£]?\d|=\s*[-−]?[$€£]?\d")
_COUNT_QUESTION = re.compile(r"^\s*(?:how many|what is the (?:total )?number of|count)\b", re.IGNORECASE)
_INTEGER = re.compile(r"^\d+$")
# Tools of a recorded program (the template drafter's essential actions) that compute a new number.
ARITHMETIC_TOOLS = frozenset({"add", "sum", "subtract", "multiply", "divide", "mean", "proportion"})
# Scale words as tables write them: "(in millions)", "$ in thousands", "in $000s", "(millions)", "Accuracy (%)".
_SCALE_WORDS = (
    ("billion", re.compile(r"\bbillions?\b|[$€£¥]\s*['’]?bn\b|\bin\s+bn\b", re.IGNORECASE)),
    ("million", re.compile(r"\bmillions?\b|[$€£¥]\s*['’]?m(?:n|m)?\b|\bin\s+m(?:n|m)\b", re.IGNORECASE)),
    ("thousand", re.compile(r"\bthousands?\b|[$€£¥]\s*['’]?000s?\b|\bin\s+000s?\b", re.IGNORECASE)),
    ("percent", re.compile(r"%|\bpercent(?:age)?s?\b", re.IGNORECASE)),
)
_PERCENT_QUESTION = re.compile(r"%|\bpercent(?:age)?\b", re.IGNORECASE)


def is_number(text: str) -> bool:
    """A single number as answers write it: 1,234.5, -3, $12, (4.2), 85%."""
    return bool(_NUMBER.match(text.strip()))


def suggested_answer_type(*, question: str, rationale: str, answer: Sequence[str], tools: Iterable[str] = ()) -> str:
    """Count for a "how many" question answered by a whole number; several items, multi-span; a number the
    rationale (or the recorded program's `tools`) computes, arithmetic; any other answer, span; no answer, nothing."""
    items = [item.strip() for item in answer if item.strip()]
    tools = set(tools)
    if not items:
        return ""
    is_whole = len(items) == 1 and bool(_INTEGER.match(items[0].replace(",", "")))
    if is_whole and (_COUNT_QUESTION.match(question) or "count" in tools):
        return "count"
    if len(items) > 1:
        return "multi-span"
    if is_number(items[0]) and (_OPERATION.search(rationale) or tools & ARITHMETIC_TOOLS):
        return "arithmetic"
    return "span"


def table_scale(texts: Iterable[str]) -> str:
    """The first scale word in a table's caption and header cells (given in that order), or ""."""
    for text in texts:
        for scale, pattern in _SCALE_WORDS:
            if pattern.search(text or ""):
                return scale
    return ""


def suggested_scale(*, question: str, answer: Sequence[str], table_texts: Iterable[str] = ()) -> str:
    """Percent when the answer or question says so; else, for a numeric answer, the scale its tables declare."""
    items = [item.strip() for item in answer if item.strip()]
    if not items:
        return ""
    if any(item.endswith("%") for item in items) or (
        all(is_number(item) for item in items) and _PERCENT_QUESTION.search(question)
    ):
        return "percent"
    if not all(is_number(item) for item in items):
        return ""
    return table_scale(table_texts)


def header_texts(*, caption: str, rows: Sequence[Sequence[str]], header_rows: int = 1) -> list[str]:
    """What a table says about its units: the caption, then the cells of its header rows."""
    return [caption or "", *(str(cell) for row in rows[: max(header_rows, 1)] for cell in row)]

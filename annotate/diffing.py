"""Word-level differences between two texts, and an instance field's stored value as a diff shows it: for the
draft-versus-current view, revision diffs and the two versions of a double annotation."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

from curation.answer_types import ANSWER_TYPE_LABELS, SCALE_LABELS
from curation.models import Instance

_TOKENS = re.compile(r"\s+|[^\s]+")


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """A list of (op, text) with op in equal/insert/delete, covering both texts word by word."""
    a, b = _TOKENS.findall(before or ""), _TOKENS.findall(after or "")
    result: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            result.append(("equal", "".join(a[i1:i2])))
        if op in ("delete", "replace"):
            result.append(("delete", "".join(a[i1:i2])))
        if op in ("insert", "replace"):
            result.append(("insert", "".join(b[j1:j2])))
    return [(op, text) for op, text in result if text]


def answer_text(items: list[str]) -> str:
    return "\n".join(items)


# Stored choices as the pages write them (a scale "" is the scale None; null, not chosen yet, stays empty).
CHOICE_LABELS: dict[str, Mapping[str, str]] = {
    "answer_form": dict(Instance.AnswerForm.choices),
    "answer_type": ANSWER_TYPE_LABELS,
    "scale": SCALE_LABELS,
    "answer_source": dict(Instance.AnswerSource.choices),
}


def field_text(
    name: str, value: Any, *, tables: Mapping[int, str] | None = None, types: Mapping[int, str] | None = None
) -> str:
    """An instance field's stored value as a diff writes it: a choice by its label (never the stored slug), the answer
    an item a line, relevant tables by their names in `tables` (else their ids), a reasoning type by its name."""
    if name == "answer":
        return answer_text([str(item) for item in value or []])
    if name == "relevant_table_ids":
        return ", ".join(str(pk) if tables is None else tables.get(pk, f"table {pk}") for pk in value or [])
    if name == "reasoning_type_id":
        return (types or {}).get(value, "") if value else ""
    if name in CHOICE_LABELS and value is not None:
        value = CHOICE_LABELS[name].get(value, value)
    return str(value or "")

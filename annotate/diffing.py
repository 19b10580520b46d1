"""Word-level differences between two texts, for the draft-versus-current view (pure)."""

from __future__ import annotations

import difflib
import re

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

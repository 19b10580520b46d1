"""The one rule for JSON that comes from outside: finite numbers only and at most MAX_DEPTH levels of nesting.

Python's json accepts NaN and Infinity (which PostgreSQL's jsonb, strict JSON readers and our responses refuse) and
recurses without bound on nested arrays; both used to surface as 500s (issue 19.7). Pure: no Django.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64


class JsonInputError(ValueError):
    """The text is not JSON we accept; `path` names where (`$[3].answer`), empty when the text did not parse
    (then `line`, `column` and `reason` say where and why it did not)."""

    def __init__(
        self, message: str, *, path: str = "", line: int | None = None, column: int | None = None, reason: str = ""
    ):
        super().__init__(message)
        self.path = path
        self.line = line
        self.column = column
        self.reason = reason

    def one_line(self, number: int) -> str:
        """The message for line `number` of a JSON Lines file."""
        return f"line {number}: not JSON ({self.reason})" if self.reason else f"line {number}: {self}"


def _check(value: Any, *, max_depth: int, allow_non_finite: bool = False) -> None:
    """Walk without recursion; the first non-finite number (unless allowed) or over-deep container raises, naming
    its path."""
    stack: list[tuple[Any, str, int]] = [(value, "$", 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, float) and not math.isfinite(node) and not allow_non_finite:
            raise JsonInputError(f"{path}: {node} is not a finite number (NaN and Infinity are refused).", path=path)
        if isinstance(node, dict | list):
            if depth >= max_depth:
                raise JsonInputError(f"{path}: nested deeper than {max_depth} levels.", path=path)
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, child in items:
                child_path = f"{path}.{key}" if isinstance(node, dict) else f"{path}[{key}]"
                stack.append((child, child_path, depth + 1))


def json_loads_strict(text: str | bytes, *, max_depth: int = MAX_DEPTH, allow_non_finite: bool = False) -> Any:
    """Parse JSON text, refusing non-finite numbers and nesting past `max_depth` with a JsonInputError.

    `allow_non_finite` keeps NaN and ±Infinity for a reader that scores them as the official script does (a TAT-QA
    prediction file); such values must never be stored or echoed."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise JsonInputError(
            f"Not valid JSON at line {error.lineno} column {error.colno}: {error.msg}.",
            line=error.lineno,
            column=error.colno,
            reason=error.msg,
        ) from error
    except RecursionError as error:
        raise JsonInputError(f"$: nested deeper than {max_depth} levels.", path="$") from error
    _check(value, max_depth=max_depth, allow_non_finite=allow_non_finite)
    return value

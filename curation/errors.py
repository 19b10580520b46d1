"""Domain errors raised by services (one exception handler maps them to HTTP status codes), and the range check a
service makes of a number it is given."""

from __future__ import annotations

import math
from typing import Any


class DomainError(Exception):
    """Base class: a request that the domain refuses, with a message for a person."""

    status_code = 400
    code = "invalid"

    def __init__(self, message: str, *, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail or {}


class InvalidInput(DomainError):
    status_code = 400
    code = "invalid"


class NotPermitted(DomainError):
    status_code = 403
    code = "forbidden"


class NotFound(DomainError):
    status_code = 404
    code = "not_found"


class Conflict(DomainError):
    """Someone else changed the object first: reload and try again."""

    status_code = 409
    code = "conflict"


def number_in_range(name: str, value: Any, low: float, high: float, *, label: str | None = None) -> Any:
    """`value` when it is a number (not a bool, not NaN) from `low` to `high`; otherwise
    InvalidInput for the field `name`, its message in the words of the field's `label` (a page shows it beside that
    label) or else its name: the check a service makes of each number it is given."""
    words = label or name
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value) or not low <= value <= high:
        raise InvalidInput(f"{words} must be between {low:g} and {high:g}.", detail={"field": name})
    return value

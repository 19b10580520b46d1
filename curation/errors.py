"""Domain errors raised by services; one exception handler maps them to HTTP status codes."""

from __future__ import annotations

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

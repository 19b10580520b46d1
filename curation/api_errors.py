"""Maps domain errors to HTTP responses for the API: 400, 403, 404 and 409 with a readable message."""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from curation.errors import DomainError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        body = {"error": exc.code, "detail": exc.message, **exc.detail}
        return Response(body, status=exc.status_code)
    return drf_exception_handler(exc, context)

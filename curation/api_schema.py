"""The OpenAPI schema's view of errors: every operation documents the error statuses the API can answer.

`curation.api_errors.exception_handler` is the one place errors become responses (400 bad input naming the
field, 401 without credentials, 403 for a role that may not, 404 outside the viewer's projects, 409 for a state
conflict); this class is the one place the schema says so, so a client generated from the schema (and the
schema-driven fuzz run in tests/test_api_fuzz.py) knows every status an endpoint can answer.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema

ERROR_BODY: dict[str, Any] = {
    "type": "object",
    "description": "`detail` is a readable message; a 400 names each wrong field with its messages.",
    "additionalProperties": True,
}

ERROR_STATUSES = {
    "400": "Bad input: the body names each wrong field (or `detail` says what is wrong).",
    "401": "No credentials, or invalid ones.",
    "403": "Your role in this project may not do this.",
    "404": "Not found, or outside your projects.",
}
CONFLICT = {"409": "The object's state or version does not allow this now."}


class AutoSchema(SpectacularAutoSchema):
    def get_description(self) -> str:  # type: ignore[override]
        # One view class serving several URLs (given its service by the URLconf) is given each one's description.
        return getattr(self.view, "description", "") or super().get_description()

    def _get_response_bodies(self, direction: str = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction=direction)
        statuses = ERROR_STATUSES | (CONFLICT if self.method != "GET" else {})
        for code, description in statuses.items():
            responses.setdefault(
                code, {"description": description, "content": {"application/json": {"schema": ERROR_BODY}}}
            )
        return responses

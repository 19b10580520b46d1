"""The API's one pagination rule: a page is at most MAX_LIMIT rows and an offset is a number the database can hold.

A huge `?limit=` is clamped (DRF's `max_limit`); an offset past MAX_OFFSET answers 400 naming `offset` instead of
overflowing the database's integer (a 500 before, issue 19.7).
"""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

MAX_LIMIT = 1000
MAX_OFFSET = 2**31 - 1


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT

    def get_offset(self, request) -> int:
        raw = request.query_params.get(self.offset_query_param, "")
        if raw.strip().isdigit() and int(raw) > MAX_OFFSET:
            raise ValidationError({self.offset_query_param: [f"Ensure this value is at most {MAX_OFFSET}."]})
        return super().get_offset(request)

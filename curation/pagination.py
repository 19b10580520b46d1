"""The API's one pagination rule: a page is at most MAX_LIMIT rows, an offset is a number the database can hold, and
a list counts at most COUNT_UP_TO of its rows.

A huge `?limit=` is clamped (DRF's `max_limit`); an offset past MAX_OFFSET answers 400 naming `offset` instead of
overflowing the database's integer (a 500 before, issue 19.7). An exact count reads every visible row, so a page
would cost the project's size: `count` stops at COUNT_UP_TO (`count_capped` says it stopped there, the instance
browser's "More than 1,000 instances") and `next` comes from the page itself (one row more is read), so it leads on
past the count.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response

MAX_LIMIT = 1000
MAX_OFFSET = 2**31 - 1
COUNT_UP_TO = 1000  # rows counted at most, by the API's lists and the instance browser alike


def count_up_to(rows: QuerySet | list) -> int:
    """How many rows, but at most COUNT_UP_TO + 1: one more than the cap says there are more (the count reads at
    most that many rows, whatever the project's size)."""
    if isinstance(rows, QuerySet):
        # Unordered: which rows are counted does not matter, and a sort (the model's ordering) reads every match.
        return rows.order_by()[: COUNT_UP_TO + 1].count()
    return min(len(rows), COUNT_UP_TO + 1)


def capped_count(rows: QuerySet | list) -> tuple[int, bool]:
    """How many rows, at most COUNT_UP_TO, and whether there are more: a count that costs at most COUNT_UP_TO + 1
    rows read, for lists and for the queue's figures ("more than 1,000 drafts")."""
    counted = count_up_to(rows)
    return min(counted, COUNT_UP_TO), counted > COUNT_UP_TO


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT

    def get_offset(self, request: Request) -> int:
        raw = request.query_params.get(self.offset_query_param, "")
        if raw.strip().isdigit() and int(raw) > MAX_OFFSET:
            raise ValidationError({self.offset_query_param: [f"Ensure this value is at most {MAX_OFFSET}."]})
        return super().get_offset(request)

    def paginate_queryset(self, queryset: QuerySet | list, request: Request, view: Any = None) -> list | None:
        self.request = request
        self.limit = self.get_limit(request)
        if self.limit is None:
            return None
        self.offset = self.get_offset(request)
        self.count, self.count_capped = capped_count(queryset)
        if self.count > self.limit and self.template is not None:
            self.display_page_controls = True
        rows = list(queryset[self.offset : self.offset + self.limit + 1])
        self.has_next = len(rows) > self.limit
        return rows[: self.limit]

    def get_next_link(self) -> str | None:
        if not self.has_next:
            return None
        self.count, exact = self.offset + self.limit + 1, self.count  # the parent's test: a row past this page
        try:
            return super().get_next_link()
        finally:
            self.count = exact

    def get_paginated_response(self, data: list) -> Response:
        response = super().get_paginated_response(data)
        response.data["count_capped"] = self.count_capped
        return response

    def get_paginated_response_schema(self, schema: dict) -> dict:
        envelope = super().get_paginated_response_schema(schema)
        envelope["required"] = ["count", "count_capped", "results"]
        envelope["properties"]["count"] = {
            "type": "integer",
            "example": 123,
            "description": f"How many rows match, counted up to {COUNT_UP_TO}; past it, {COUNT_UP_TO} and "
            "count_capped is true. Follow `next` to read on.",
        }
        envelope["properties"]["count_capped"] = {
            "type": "boolean",
            "description": f"True when more than {COUNT_UP_TO} rows match (count stopped at {COUNT_UP_TO}).",
        }
        return envelope

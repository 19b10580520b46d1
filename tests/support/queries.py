"""Count database queries with an execute wrapper (immune to the per-request reset of queries_log)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


@contextmanager
def count_queries() -> Iterator[list[str]]:
    executed: list[str] = []

    def wrapper(execute, sql, params, many, context):
        executed.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield executed

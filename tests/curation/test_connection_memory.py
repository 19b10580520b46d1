"""A database connection keeps nothing of the statements it sent: a worker that wrote a release holds no INSERT."""

from __future__ import annotations

import gc
import tracemalloc

import pytest
from django.db import connection

from tests.conftest import postgres_only

pytestmark = [postgres_only(), pytest.mark.postgres, pytest.mark.django_db]


def test_a_connection_keeps_no_text_of_the_statements_it_sent():
    """Django binds parameters on the client, so a statement's text carries its values (a release cut's INSERT of
    1,000 items is megabytes). With prepared statements on for the connection, psycopg remembered the last 100 texts
    to count their runs: 46 MB still alive after a 10,000-item cut. 40 statements of 200 kB each must leave none."""
    value = "x" * 200_000
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for i in range(40):
                cursor.execute("SELECT length(%s) + %s", [value, i])
                assert cursor.fetchone()[0] == 200_000 + i
            gc.collect()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    assert kept < 1_000_000, f"{kept} bytes of 8,000,000 sent are still held"

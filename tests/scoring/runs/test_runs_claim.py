"""Claiming a scoring chunk is a compare-and-set on PostgreSQL too: a worker whose claim waited for a rival's row lock
finds the chunk taken once the rival commits, so two workers never both run one chunk (nor ask its items twice)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from scoring.models import RunChunk
from scoring.runs.chunks import SCORING_CHUNKS
from scoring.runs.creation import run_create
from scoring.runs.lifecycle import run_start
from tests.conftest import postgres_only
from tests.scoring.run_support import endpoint_for, small_release

pytestmark = [postgres_only(), pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _waiting_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        # Inside a transaction PostgreSQL keeps the first reading of its statistics views; a fresh one each time.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def test_a_claim_that_waited_for_a_rivals_lock_finds_the_chunk_taken(project, personas):
    release = small_release(project, documents=1, questions=2)
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    run = run_create(release=release, actor=personas["manager"], method="direct", endpoint=endpoint)
    run_start(run=run, actor=personas["manager"], dispatch=False)
    chunk = RunChunk.objects.get(run=run)
    rival_done, results = threading.Event(), {}

    def rival() -> None:
        try:
            results["rival"] = SCORING_CHUNKS.take(chunk.pk, worker="scoring@rival")
        finally:
            rival_done.set()
            connection.close()

    with transaction.atomic():
        results["first"] = SCORING_CHUNKS.take(chunk.pk, worker="scoring@first")  # holds the row lock until commit
        thread = threading.Thread(target=rival)
        thread.start()
        deadline = time.monotonic() + 20
        while not _waiting_for_a_lock() and not rival_done.is_set() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not rival_done.is_set(), "the rival's claim did not wait for the row lock"
    thread.join(timeout=20)
    chunk.refresh_from_db()
    assert results["first"] and results["rival"] is None  # the first claim's token; the rival took nothing
    assert (chunk.claim_token, chunk.worker, chunk.deliveries) == (results["first"], "scoring@first", 1)

"""The flush after a transactional test outlasts a request still writing when the test ends (a browser's last autosave
in the live server's thread): PostgreSQL breaks the deadlock their row locks make, and the flush goes through."""

import threading
import time

import psycopg
import pytest
from django.core.management import call_command
from django.core.management.color import no_style
from django.core.management.sql import sql_flush
from django.db import connection

from curation.models import Instance
from tests.conftest import postgres_only

pytestmark = [postgres_only(), pytest.mark.postgres]


def test_a_flush_crossed_by_a_writer_goes_through(transactional_db, make_instance, personas, django_db_blocker):
    """The writer holds a row of the table the flush empties later, then asks for a row of one it empties earlier; the
    flush waits for the first row while holding the second. The flush waits first, so PostgreSQL aborts it; it is
    tried again once the writer is done, and empties every table."""
    rows = {"curation_instance": make_instance().pk, "auth_user": personas["annotator"].pk}
    statements = sql_flush(no_style(), connection)
    earlier, later = sorted(rows, key=lambda table: statements.index(next(s for s in statements if f'"{table}"' in s)))
    settings = connection.settings_dict
    holding = threading.Event()
    committed = []

    def flush_waits(other) -> bool:
        other.execute("SELECT pg_stat_clear_snapshot()")
        waiting = "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM%%'"
        return other.execute(waiting).fetchone() is not None

    def writer():
        with psycopg.connect(
            dbname=settings["NAME"], host=settings["HOST"], port=settings["PORT"] or None, user=settings["USER"]
        ) as other:
            with other.transaction():
                other.execute(f"SELECT 1 FROM {later} WHERE id = %s FOR UPDATE", [rows[later]])
                holding.set()
                while not flush_waits(other):
                    time.sleep(0.05)
                other.execute(f"SELECT 1 FROM {earlier} WHERE id = %s FOR UPDATE", [rows[earlier]])
            committed.append(True)

    thread = threading.Thread(target=writer)
    thread.start()
    holding.wait()
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0, reset_sequences=False)
    thread.join()
    assert committed, "the writer was aborted, not the flush: nothing was tried again"
    assert not Instance.objects.exists()

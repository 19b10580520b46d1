"""Issue 19.4 for drafting, through real Celery workers on PostgreSQL and Redis: during a 60-context LLM drafting
run its Redis is stopped for 5 s, its PostgreSQL is restarted and a drafting worker holding an item is killed with
SIGKILL. Every context is drafted exactly once, none fails, and the run completes. benchmarks/outage.py's disturbed
run with `--kind drafting`, on a private PostgreSQL cluster and Redis."""

from __future__ import annotations

import pytest
from django.conf import settings

from tests.support.outage import outage_disturbed_run, outage_unavailable_reason

ITEMS = 60
_cannot = outage_unavailable_reason()

pytestmark = [
    pytest.mark.worker,
    # The suite's test database, migrated, lends its schema to the scenario's private one (tests/support/outage.py).
    pytest.mark.django_db,
    pytest.mark.skipif(
        not settings.IS_POSTGRES, reason="the outage test is of the production shape: run it with DATABASE_URL"
    ),
    pytest.mark.skipif(_cannot is not None, reason=_cannot or ""),
]


def test_redis_stopped_postgres_restarted_and_a_worker_killed_mid_run_draft_every_context_exactly_once():
    result = outage_disturbed_run(kind="drafting", items=ITEMS, latency_s=0.1)
    run = result["disturbed"]
    disturbances = run["disturbances"]
    assert disturbances["redis_stopped_at_items"] < disturbances["postgres_restarted_at_items"] < ITEMS
    assert disturbances["worker_killed_at_items"] < ITEMS
    assert {"redis_outage_s", "postgres_down_s", "killed_claim_taken_over_after_s"} <= set(disturbances)
    assert run["status"] == "completed", result
    assert run["drafted"] == run["drafts"] == ITEMS, result
    assert run["failed"] == run["duplicate_drafts"] == 0
    # Two requests a context; only the killed worker's item was asked again (at most its two calls).
    assert 0 <= run["requests_asked_again"] <= 2, result
    assert run["max_deliveries"] == 2  # the killed worker's item, claimed once more

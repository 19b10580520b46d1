"""Celery tasks of the core (thin: ids in, one service call)."""

from __future__ import annotations

from celery import shared_task

from curation.jobs import jobs_reap


@shared_task(name="curation.jobs_reap", acks_late=True)
def jobs_reap_task() -> dict[str, int]:
    """Reap the stalled drafting items, scoring chunks and export builds (beat runs this every minute)."""
    return jobs_reap()


# autodiscover_tasks() imports only `<app>.tasks`; the drafting and release tasks live in their own packages.
import curation.drafting.tasks  # noqa: E402
import curation.papers.tasks  # noqa: E402
import curation.releases.tasks  # noqa: E402
import curation.webhooks.tasks  # noqa: E402,F401

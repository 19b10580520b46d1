"""What the tests of the background job kinds share: the messages that would leave for the broker, and the row a
worker leaves behind when it stops mid-job."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from celery import Task
from django.db import models
from django.utils import timezone


def broker_messages(monkeypatch: Any, *, with_queue: bool = False) -> list[tuple]:
    """Record, instead of sending, each message that would leave for the broker (below the transaction-aware send of
    curation/jobs.py): (task name, args), or (task name, args, queue) `with_queue`."""
    messages: list[tuple] = []

    def record(task: Task, args: Any = None, kwargs: Any = None, **options: Any) -> None:
        messages.append((task.name, args, options["queue"]) if with_queue else (task.name, args))

    monkeypatch.setattr(Task, "apply_async", record)
    return messages


def left_by(row: models.Model, *, worker: str, minutes: float, attempts: int = 1, **progress: Any) -> None:
    """What a worker leaves when it stops mid-job: `row` running, claimed by it (token "dead-token"), its heartbeat
    `minutes` old, with the `progress` it had made (items_done=2…)."""
    type(row)._default_manager.filter(pk=row.pk).update(
        state="running",
        claim_token="dead-token",
        worker=worker,
        attempts=attempts,
        heartbeat_at=timezone.now() - timedelta(minutes=minutes),
        **progress,
    )

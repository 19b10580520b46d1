"""Set or remove a batch's deadline (an operator command; the batches page and API do the same for managers)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from curation.batches.services import batch_deadline_set
from curation.deadlines import deadline_state
from curation.management.base import ReportCommand


class Command(ReportCommand):
    takes_project = True
    takes_batch = True
    help = (
        "Set a batch's deadline (--deadline 2027-01-15T17:00, in the server's time zone unless it carries one) or "
        "remove it (--clear); the work queue and the dashboard show it with a countdown."
    )

    def add_options(self, parser: CommandParser) -> None:
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--deadline", help="ISO 8601 date and time")
        group.add_argument("--clear", action="store_true", help="remove the deadline")

    def report(self, options: dict[str, Any]) -> dict[str, Any]:
        deadline_at = None
        if not options["clear"]:
            deadline_at = parse_datetime(options["deadline"])
            if deadline_at is None:
                raise CommandError(f"--deadline {options['deadline']!r} is not an ISO 8601 date and time")
            if timezone.is_naive(deadline_at):
                deadline_at = timezone.make_aware(deadline_at)
        batch = batch_deadline_set(batch_id=self.batch.pk, actor=None, deadline_at=deadline_at)
        at = batch.deadline_at.isoformat() if batch.deadline_at else None
        return {"batch": batch.pk, "name": batch.name, "deadline_at": at, "label": deadline_state(batch).label}

    def lines(self, result: dict[str, Any], options: dict[str, Any]) -> Any:
        at = result["deadline_at"] and datetime.fromisoformat(result["deadline_at"])
        yield f"batch {result['name']!r}: " + (
            f"deadline {at:%Y-%m-%d %H:%M} ({result['label']})" if at else "no deadline"
        )

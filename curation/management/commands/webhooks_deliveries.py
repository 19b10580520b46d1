"""List a project's recent webhook deliveries with their attempts (an operator command; managers use the page)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.template.defaultfilters import pluralize

from curation.management.base import ReportCommand
from curation.webhooks.models import WebhookDelivery


class Command(ReportCommand):
    takes_project = True
    help = "List a project's most recent webhook deliveries (state, attempts, last status); --json for one object each."

    json_help = "print a JSON list on stdout"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--state", choices=WebhookDelivery.State.values, help="only deliveries in this state")
        parser.add_argument("--limit", type=int, default=50)

    def report(self, options: dict[str, Any]) -> list[dict[str, Any]]:
        if options["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        deliveries = WebhookDelivery.objects.filter(webhook__project=self.project).select_related("webhook")
        if options["state"]:
            deliveries = deliveries.filter(state=options["state"])
        deliveries = deliveries.prefetch_related("attempt_rows").order_by("-created_at", "-id")[: options["limit"]]
        return [
            {
                "id": delivery.pk,
                "webhook": delivery.webhook_id,
                "url": delivery.webhook.url,
                "event": delivery.event,
                "state": delivery.state,
                "attempts": [
                    {"number": a.number, "status_code": a.status_code, "duration_ms": a.duration_ms, "error": a.error}
                    for a in delivery.attempt_rows.all()
                ],
                "created_at": delivery.created_at.isoformat(),
                "error": delivery.error,
            }
            for delivery in deliveries
        ]

    def lines(self, rows: list[dict[str, Any]], options: dict[str, Any]) -> Any:
        if not rows:
            yield f"no webhook deliveries in {options['project']}"
        for row in rows:
            last = row["attempts"][-1] if row["attempts"] else {"status_code": None, "error": "not sent yet"}
            answer = f"HTTP {last['status_code']}" if last["status_code"] else last["error"]
            attempts = f"{len(row['attempts'])} attempt{pluralize(len(row['attempts']))}"
            yield (f"{row['id']:>6}  {row['event']:<22} {row['state']:<9} {attempts}  {answer}  → {row['url']}")

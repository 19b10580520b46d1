"""`quality_figures --project P [--figure gold|drift] [--json]`: the dashboard's hidden-gold table and drift lines,
from the same selectors as the page."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from annotate.quality.drift import drift_rows, project_drift
from annotate.quality.selectors import gold_rows, project_gold_figures
from curation.management.base import ReportCommand
from curation.toolkit.numbers import fixed


class Command(ReportCommand):
    takes_project = True
    help = (
        "Print the hidden-gold running EM per annotator (n, 95 % Wilson interval, alert, pause) and the weekly drift "
        "rows (round-one approval, round-two flags, hidden-gold EM, guidelines published)."
    )

    json_help = 'print one JSON object: {"gold": […], "drift": […]}'

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--figure", choices=("gold", "drift", "all"), default="all")

    def report(self, options: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        figure = options["figure"]
        result: dict[str, list[dict[str, Any]]] = {}
        if figure in ("gold", "all"):
            result["gold"] = gold_rows(project_gold_figures(self.project))
        if figure in ("drift", "all"):
            result["drift"] = drift_rows(project_drift(self.project))
        return result

    def lines(self, result: dict[str, list[dict[str, Any]]], options: dict[str, Any]) -> Any:
        if "gold" in result:
            yield "hidden gold:" if result["gold"] else "hidden gold: no gold answered yet"
            for row in result["gold"]:
                state = "paused" if row["is_paused"] else ("below the threshold" if row["is_below"] else "ok")
                yield (
                    f"  {row['user']}: EM {fixed(row['em'], 2)} over {row['n']} ({row['total']} in all), "
                    f"95 % {fixed(row['low'], 2)}–{fixed(row['high'], 2)}, {state}"
                )
        if "drift" in result:
            yield "drift:" if result["drift"] else "drift: no decisions or hidden gold yet"
            for row in result["drift"]:
                marker = f"  [{row['guidelines']}]" if row["guidelines"] else ""
                yield (
                    f"  {row['user']} week of {row['week']}: round-one approval {fixed(row['round1_approval'], 2)} "
                    f"(n {row['round1_n']}), round-two flags {fixed(row['round2_flags'], 2)} (n {row['round2_n']}), "
                    f"hidden-gold EM {fixed(row['gold_em'], 2)} (n {row['gold_n']}){marker}"
                )

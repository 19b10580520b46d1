"""`draft_costs --project P [--json]`: how much annotators changed the drafts, per field and group (the dashboard's
*What the drafts cost*, from the same selector)."""

from __future__ import annotations

from typing import Any

from annotate.dashboard.draft_costs import draft_costs_cached
from annotate.dashboard.edit_costs import DIMENSION_LABELS, FIELD_LABELS, FIELDS, flat_rows
from curation.management.base import ReportCommand


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


class Command(ReportCommand):
    takes_project = True
    help = (
        "Per field, how much annotators changed the drafts (edit distance normalised by the longer length, share "
        "kept unchanged, share rewritten) by drafter, prompt version, model endpoint and reasoning type, with the "
        "median refining time."
    )

    json_help = "print one JSON object: the figures and flat rows"

    def report(self, options: dict[str, Any]) -> dict[str, Any]:
        figures = draft_costs_cached(self.project)
        return {**figures, "rows": flat_rows(figures)}

    def lines(self, figures: dict[str, Any], options: dict[str, Any]) -> Any:
        yield (
            f"{figures['instances']} drafted instances submitted; rewritten = normalised distance above "
            f"{figures['threshold']}"
        )
        for dimension, groups in figures["dimensions"].items():
            yield f"by {DIMENSION_LABELS[dimension]}:"
            for group in groups:
                seconds = group["median_seconds"]
                yield (
                    f"  {group['group']}: {group['instances']} instances, median "
                    f"{'—' if seconds is None else f'{seconds:.0f} s'}"
                )
                for name in FIELDS:
                    cost = group["fields"][name]
                    if not cost["n"]:
                        continue
                    yield (
                        f"    {FIELD_LABELS[name]}: distance {cost['mean_distance']:.2f}, unchanged "
                        f"{_percent(cost['unchanged_share'])}, rewritten {_percent(cost['rewritten_share'])} "
                        f"(n {cost['n']})"
                    )

"""Agreement on double-annotated items of a project, per batch and per annotator pair with counts (operators)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from annotate.agreement.selectors import FIGURE_LABELS, FIGURES, project_agreement
from curation.management.lookup import project_named
from curation.toolkit.numbers import fixed


def _figure(value: float | None) -> str:
    return fixed(value, 2)


class Command(BaseCommand):
    help = "Print a project's annotator agreement (answer EM/F1, κ, α, Jaccard) per batch and annotator pair."

    def add_arguments(self, parser) -> None:
        parser.add_argument("project", help="the project's slug")
        parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")

    def handle(self, *args, **options) -> None:
        project = project_named(options["project"])
        figures = project_agreement(project)
        settings = figures.pop("agreement_settings")
        result = {
            "project": project.slug,
            "double_fraction": settings.double_fraction,
            "seed": settings.seed,
            **figures,
        }
        if options["json"]:
            self.stdout.write(json.dumps(result))
            return
        self.stdout.write(
            f"{project.slug}: double annotation {settings.double_fraction:.0%} (seed {settings.seed}); "
            f"{figures['overall']['n']} items with both versions, {figures['open_copies']} copies open"
        )
        header = ["group", "n", *(FIGURE_LABELS[key] for key in FIGURES)]
        self.stdout.write(" | ".join(header))
        rows = [(f"batch {row['batch']}", row) for row in figures["batches"]]
        rows += [(f"pair {row['pair']}", row) for row in figures["pairs"]]
        rows.append(("all", figures["overall"]))
        for name, row in rows:
            self.stdout.write(" | ".join([name, str(row["n"]), *(_figure(row[key]) for key in FIGURES)]))

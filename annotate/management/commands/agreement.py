"""Agreement on double-annotated items of a project, per batch and per annotator pair with counts (operators)."""

from __future__ import annotations

from annotate.agreement.selectors import FIGURE_LABELS, FIGURES, project_agreement
from curation.management.base import ReportCommand
from curation.toolkit.numbers import fixed


class Command(ReportCommand):
    takes_project = True
    help = "Print a project's annotator agreement (answer EM/F1, κ, α, Jaccard) per batch and annotator pair."

    def report(self, options):
        figures = project_agreement(self.project)
        settings = figures.pop("agreement_settings")
        return {
            "project": self.project.slug,
            "double_fraction": settings.double_fraction,
            "seed": settings.seed,
            **figures,
        }

    def lines(self, figures, options):
        yield (
            f"{figures['project']}: double annotation {figures['double_fraction']:.0%} (seed {figures['seed']}); "
            f"{figures['overall']['n']} items with both versions, {figures['open_copies']} copies open"
        )
        if not figures["double_fraction"]:
            yield (
                "Double annotation is off: set the share of drafts given to a second annotator under 'Agreement on "
                "double-annotated items' on the project's dashboard."
            )
        yield " | ".join(["group", "n", *(FIGURE_LABELS[key] for key in FIGURES)])
        rows = [(f"batch {row['batch']}", row) for row in figures["batches"]]
        rows += [(f"pair {row['pair']}", row) for row in figures["pairs"]]
        rows.append(("all", figures["overall"]))
        for name, row in rows:
            yield " | ".join([name, str(row["n"]), *(fixed(row[key], 2) for key in FIGURES)])

"""`calibrate --project P --batch B [--panel NAME …] [--json]`: the batches page's Calibrate, run in this process."""

from __future__ import annotations

from django.core.management.base import CommandError

from curation.endpoints.models import ModelEndpoint
from curation.management.base import ReportCommand
from curation.panel.services import calibration_request, panel_set, panel_summaries
from scoring.calibration import CALIBRATIONS


class Command(ReportCommand):
    takes_project = True
    takes_batch = True
    help = (
        "Ask each model of the project's panel every question of a batch and record per item how many answered it "
        "correctly (k of n); print the distribution of k and each model's share."
    )

    def add_options(self, parser) -> None:
        parser.add_argument("--panel", nargs="+", metavar="ENDPOINT", help="name the panel first (endpoint names)")

    def report(self, options):
        if options["panel"]:
            endpoints = ModelEndpoint.objects.usable_in(self.project).filter(name__in=options["panel"])
            unknown = set(options["panel"]) - {e.name for e in endpoints}
            if unknown:
                raise CommandError(f"No endpoint {', '.join(sorted(unknown))} usable in {self.project.slug}.")
            panel_set(project=self.project, actor=None, endpoint_ids=[e.pk for e in endpoints])
        calibration = calibration_request(batch_id=self.batch.pk, actor=None)
        calibration = CALIBRATIONS.run(calibration.pk, worker="calibrate command")
        summary = panel_summaries([self.batch]).get(self.batch.pk) or {}
        return {
            "batch": self.batch.name,
            "calibration": calibration.pk,
            "state": calibration.state,
            "error": calibration.error,
            "items": calibration.items_total,
            "k_of_n": summary.get("k_of_n", {}),
            "models": summary.get("models", []),
            "uncalibrated": summary.get("uncalibrated", 0),
        }

    def lines(self, report, options):
        yield f"calibration {report['calibration']} of {report['batch']}: {report['state']}, {report['items']} items"
        for label, count in report["k_of_n"].items():
            yield f"answered by {label}: {count}"
        for row in report["models"]:
            yield f"{row['model']}: {row['answered']} of {row['asked']} ({row['percent']} %)"

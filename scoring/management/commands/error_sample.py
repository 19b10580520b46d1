"""`error_sample RUN [--seed S] [--per-form N] [--report] [--json]`: draw SciTaT §4.4's error sample of a completed
run for tagging (25 free-form errors with BERTScore below 60, 25 short-form errors with EM 0), or with `--report`
print the newest sample's error-type distribution with its sample size."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from curation.errors import DomainError
from curation.toolkit.numbers import fixed
from scoring.metrics.error_analysis import PER_FORM
from scoring.runs import predictions as prediction_services
from scoring.runs import selectors as scoring_selectors
from scoring.runs.models import ScoringRun


class Command(BaseCommand):
    help = "Draw a seeded random error sample of a scoring run for tagging, or report the newest one's distribution."

    def add_arguments(self, parser) -> None:
        parser.add_argument("run", type=int, help="scoring run id")
        parser.add_argument("--seed", type=int, default=42, help="random seed of the draw (default 42)")
        parser.add_argument("--per-form", type=int, default=PER_FORM, help="errors per answer form (default 25)")
        parser.add_argument("--report", action="store_true", help="report the newest sample instead of drawing one")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options) -> None:
        run = ScoringRun.objects.select_related("project").filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"No scoring run {options['run']}.")
        if not options["report"]:
            try:
                prediction_services.error_sample_draw(
                    run=run, actor=None, seed=options["seed"], per_form=options["per_form"]
                )
            except DomainError as error:
                raise CommandError(error.message) from error
        report = scoring_selectors.error_sample_report(user=None, run=run)
        if report is None:
            raise CommandError(f"Run {run.pk} has no error sample yet; run without --report to draw one.")
        predictions = report.pop("predictions") or {}
        output = {
            "run": run.pk,
            **report,
            "drawn_at": report["drawn_at"].isoformat(),
            "sampled": {form: [row["prediction"].pk for row in rows] for form, rows in predictions.items()},
        }
        if options["json"]:
            self.stdout.write(json.dumps(output, ensure_ascii=False))
            return
        self.stdout.write(f"run {run.pk}: error sample, seed {output['seed']}, up to {output['per_form']} per form")
        for form, figures in output["distribution"].items():
            self.stdout.write(
                f"  {form.replace('_', '-')}: {figures['sample_size']} sampled of {figures['errors']} errors, "
                f"{figures['tagged']} tagged"
            )
            for row in figures["types"]:
                self.stdout.write(f"    {row['label']}: {row['count']} ({fixed(row['share'], 0, scale=100)}%)")

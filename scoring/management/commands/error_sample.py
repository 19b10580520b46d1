"""`error_sample RUN [--seed S] [--per-form N] [--report] [--json]`: draw SciTaT §4.4's error sample of a completed
run for tagging (25 free-form errors with BERTScore below 60, 25 short-form errors with EM 0), or with `--report`
print the newest sample's error-type distribution with its sample size."""

from __future__ import annotations

from django.core.management.base import CommandError

from curation.management.base import ReportCommand
from curation.toolkit.numbers import fixed
from scoring.metrics.error_analysis import PER_FORM
from scoring.runs import predictions as prediction_services
from scoring.runs import selectors as scoring_selectors
from scoring.runs.models import ScoringRun


class Command(ReportCommand):
    help = "Draw a seeded random error sample of a scoring run for tagging, or report the newest one's distribution."

    def add_options(self, parser) -> None:
        parser.add_argument("run", type=int, help="scoring run id")
        parser.add_argument("--seed", type=int, default=42, help="random seed of the draw (default 42)")
        parser.add_argument("--per-form", type=int, default=PER_FORM, help="errors per answer form (default 25)")
        parser.add_argument("--report", action="store_true", help="report the newest sample instead of drawing one")

    def report(self, options):
        run = ScoringRun.objects.select_related("project").filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"No scoring run {options['run']}.")
        if not options["report"]:
            prediction_services.error_sample_draw(
                run=run, actor=None, seed=options["seed"], per_form=options["per_form"]
            )
        report = scoring_selectors.error_sample_report(user=None, run=run)
        if report is None:
            raise CommandError(f"Run {run.pk} has no error sample yet; run without --report to draw one.")
        predictions = report.pop("predictions") or {}
        return {
            "run": run.pk,
            **report,
            "drawn_at": report["drawn_at"].isoformat(),
            "sampled": {form: [row["prediction"].pk for row in rows] for form, rows in predictions.items()},
        }

    def lines(self, output, options):
        yield f"run {output['run']}: error sample, seed {output['seed']}, up to {output['per_form']} per form"
        for form, figures in output["distribution"].items():
            yield (
                f"  {form.replace('_', '-')}: {figures['sample_size']} sampled of {figures['errors']} errors, "
                f"{figures['tagged']} tagged"
            )
            for row in figures["types"]:
                yield f"    {row['label']}: {row['count']} ({fixed(row['share'], 0, scale=100)}%)"

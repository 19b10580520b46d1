"""`upload_predictions FILE --release R --project P --format F`: predictions or a harness log as a scoring run."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from curation.management.base import ReportCommand
from curation.management.lookup import endpoint_named
from scoring.runs.uploads import UPLOAD_FORMATS, upload_run_create


class Command(ReportCommand):
    takes_project = True
    takes_release = True
    help = (
        "Score a predictions file (JSONL, TAT-QA, SciTaT, FinQA) or an Inspect AI log of the release's exported task "
        "against a release: a scoring run with the project's metrics and breakdowns, as the upload page makes."
    )

    def add_options(self, parser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", required=True, choices=UPLOAD_FORMATS)
        parser.add_argument("--label", default="", help="model name shown in comparisons")
        parser.add_argument("--judge", default="", help="name of an endpoint that grades the free-form answers")

    def report(self, options):
        path: Path = options["file"]
        judge = endpoint_named(self.project, options["judge"]) if options["judge"] else None
        try:
            run = upload_run_create(release=self.release, actor=None, format=options["format"], name=path.name,
                                    content=path.read_bytes(), label=options["label"], judge=judge)  # fmt: skip
        except OSError as error:
            raise CommandError(str(error)) from error
        run.refresh_from_db()
        return {"run": run.pk, "status": run.status, "label": run.label, "figures": (run.results or {}).get("figures")}

    def lines(self, result, options):
        yield f"run {result['run']} ({result['status']}): {result['label']}"

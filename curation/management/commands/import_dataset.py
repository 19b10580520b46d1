"""`import_dataset --format tatqa|tatdqa|finqa|scitat FILE --project P [--as-release NAME] [--json]`."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from curation.datasets.formats import FORMATS
from curation.datasets.services import dataset_import
from curation.errors import DomainError
from curation.management.base import ReportCommand


class Command(ReportCommand):
    takes_project = True
    shows_progress = True
    help = "Import a TAT-QA, TAT-DQA, FinQA or SciTaT file as validated instances (and a release with --as-release)."

    def add_options(self, parser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("--as-release", default="", help="also cut a release of this name from the import")

    def report(self, options):
        path: Path = options["file"]
        try:
            content = path.read_bytes()
        except OSError as error:
            raise CommandError(f"{path}: cannot read ({error.strerror or error})") from error
        # The SOURCE.md next to a shared data file carries its license and attribution: keep it for the cards.
        source_md = path.parent / "SOURCE.md"
        extra = source_md.read_text(encoding="utf-8") if source_md.is_file() else ""
        bar = self.progress_bar(options, desc=f"import {path.name}", unit="q")
        try:
            result = dataset_import(
                project=self.project,
                actor=None,
                format=options["format"],
                source_name=path.name,
                content=content,
                as_release=options["as_release"],
                extra_attribution=extra,
                progress=bar.update,
            )
        except DomainError as error:
            raise CommandError(f"{path}: {error.message}") from error
        finally:
            bar.close()
        return result.as_dict()

    def lines(self, data, options):
        verb = "Imported" if data["created"] else "Already imported (same sha256), nothing written:"
        yield f"{verb} {options['file'].name}: {data['summary']}"
        for note in data["notes"]:
            yield f"note: {note}"
        if data["release"]:
            yield f"release: {data['release']['name']} v{data['release']['version']}"

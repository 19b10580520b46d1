"""`import_drafts FILE --project P [--format jsonl|csv] [--batch ID] [--json]`: external drafts into the queue."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError
from django.template.defaultfilters import pluralize

from curation.errors import DomainError
from curation.exchange.draft_import import drafts_import
from curation.management.base import ReportCommand


class Command(ReportCommand):
    takes_project = True
    help = "Import externally drafted questions (JSONL or CSV) as drafts to refine; the whole file or nothing."

    def add_options(self, parser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", choices=["jsonl", "csv"], help="default: from the file's extension")
        parser.add_argument("--batch", type=int, help="batch id for every draft (default: each context's batch)")

    def report(self, options):
        path: Path = options["file"]
        file_format = options["format"] or path.suffix.lstrip(".").lower()
        try:
            content = path.read_bytes()
        except OSError as error:
            raise CommandError(f"{path}: cannot read ({error.strerror or error})") from error
        try:
            created = drafts_import(
                project=self.project,
                actor=None,
                content=content,
                file_format=file_format,
                source_name=path.name,
                batch_id=options["batch"],
            )
        except DomainError as error:
            lines = "\n".join(f"  {problem}" for problem in error.detail.get("errors", []))
            raise CommandError(f"{path}: {error.message}" + (f"\n{lines}" if lines else "")) from error
        return {"created": len(created), "instance_ids": [i.pk for i in created]}

    def lines(self, result, options):
        drafts = f"{result['created']} draft{pluralize(result['created'])}"
        yield f"Imported {drafts} from {options['file'].name} into {options['project']}."

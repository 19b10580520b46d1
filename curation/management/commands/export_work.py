"""`export_work --project P --as USER [--format jsonl|csv] [--status S …] [--batch ID] [--out PATH]`."""

from __future__ import annotations

import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from curation.errors import DomainError
from curation.exchange.work_export import FORMATS, work_export
from curation.management.lookup import project_named


class Command(BaseCommand):
    help = (
        "Export work in progress (not a release) as the given user sees it: their visible instances, answers only "
        "if they may read gold answers."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--as", dest="username", required=True, help="whose view of the project to export")
        parser.add_argument("--format", choices=FORMATS, default="jsonl")
        parser.add_argument("--status", action="append", default=[], help="repeat for several; default: all")
        parser.add_argument("--batch", type=int, help="batch id")
        parser.add_argument("--out", help="file to write (default: standard output)")

    def handle(self, *args, **options) -> None:
        project = project_named(options["project"])
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user {options['username']!r}.")
        try:
            export = work_export(
                user=user,
                project=project,
                file_format=options["format"],
                statuses=options["status"],
                batch_id=options["batch"],
            )
        except DomainError as error:
            raise CommandError(error.message) from error
        if options["out"]:
            with open(options["out"], "w", encoding="utf-8", newline="") as out:
                out.writelines(export.lines)
            self.stderr.write(f"Wrote {options['out']} (work in progress, not a release).")
        else:
            sys.stdout.writelines(export.lines)

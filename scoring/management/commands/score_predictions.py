"""Score a benchmark prediction file from the command line, without touching the database (the same command as
`python -m scoring.metrics`, which starts without Django)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from scoring.metrics import command


class Command(BaseCommand):
    """`score_predictions --format tatqa|tatdqa|finqa|scitat --gold GOLD --pred PRED [...]`."""

    help = "Score a TAT-QA / TAT-DQA / FinQA / SciTaT prediction file with the official metrics (no database)."
    # Pure file-in, figures-out: no system checks or migration checks, so it runs without a database.
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        command.add_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            command.run(options, out=self.stdout.write, err=self.stderr.write)
        except command.CommandFailure as error:
            raise CommandError(str(error)) from error

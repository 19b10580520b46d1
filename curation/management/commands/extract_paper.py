"""Print what the LaTeX extractor finds in a paper source, for `call_command` (`manage.py extract_paper` runs
`curation.latex.cli` before Django is set up)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from curation.latex.cli import ExtractError, add_arguments, run


class Command(BaseCommand):
    help = "Extract tables, paragraphs and table mentions from a .tex file, a folder or an archive."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        add_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            run(options, self.stdout.write, self.style.WARNING)
        except ExtractError as error:
            raise CommandError(str(error)) from error

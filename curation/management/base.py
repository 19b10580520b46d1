"""The one shape of a command that reports a result: `--json` prints it as one JSON object, otherwise the command's
lines are printed; a domain error ends the command with its message (exit 1). Every app's commands build on it
(annotate and scoring import curation, never the reverse)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from curation.errors import DomainError


class ReportCommand(BaseCommand):
    """A command declares its own options (`add_options`), computes its result (`report`) and says it as text
    (`lines`); `refusal` names a failure to exit with once the result is printed (a run that failed, inputs
    rejected)."""

    json_help = "print the result as one JSON object"
    json_indent: int | None = None

    def add_arguments(self, parser: CommandParser) -> None:
        self.add_options(parser)
        parser.add_argument("--json", action="store_true", help=self.json_help)

    def add_options(self, parser: CommandParser) -> None:
        """The command's own arguments (`--json` is added after them)."""

    def report(self, options: dict[str, Any]) -> Any:
        """Do the command's work and return its result (JSON-serialisable; dates and other objects print as str)."""
        raise NotImplementedError

    def lines(self, result: Any, options: dict[str, Any]) -> Iterable[str]:
        """The result as lines of text, when `--json` is not given."""
        return ()

    def refusal(self, result: Any) -> str | None:
        """A failure to exit with after the result is printed, or None."""
        return None

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = self.report(options)
        except DomainError as error:
            raise CommandError(error.message) from error
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False, indent=self.json_indent, default=str))
        else:
            for line in self.lines(result, options):
                self.stdout.write(line)
        if message := self.refusal(result):
            raise CommandError(message)

"""The one shape of a command that reports a result: `--json` prints it as one JSON object, otherwise the command's
lines are printed; a domain error ends the command with its message (exit 1). Every app's commands build on it
(annotate and scoring import curation, never the reverse)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from curation.errors import DomainError
from curation.management.lookup import batch_named, project_named, release_keyed
from curation.models import Batch, Project
from curation.releases.models import Release


class ReportCommand(BaseCommand):
    """A command declares its own options (`add_options`), computes its result (`report`) and says it as text
    (`lines`); `refusal` names a failure to exit with once the result is printed (a run that failed, inputs
    rejected). `takes_project` adds `--project SLUG`, found as `self.project` before `report` runs, and
    `takes_release` with it the project's `--release` (`release_keyed`) as `self.release`; `takes_batch` the
    project's `--batch ID-OR-NAME` as `self.batch`. `shows_progress` adds `--no-progress` for `progress_bar`."""

    json_help = "print the result as one JSON object"
    json_indent: int | None = None
    takes_project = False
    takes_release = False
    takes_batch = False
    shows_progress = False
    project: Project
    release: Release
    batch: Batch

    def add_arguments(self, parser: CommandParser) -> None:
        if self.takes_project:
            parser.add_argument("--project", required=True, help="project slug")
        if self.takes_release:
            parser.add_argument("--release", required=True, help="release name (latest version), name-vN, or id")
        if self.takes_batch:
            parser.add_argument("--batch", required=True, help="batch id or name")
        self.add_options(parser)
        if self.shows_progress:
            parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument("--json", action="store_true", help=self.json_help)

    def add_options(self, parser: CommandParser) -> None:
        """The command's own arguments (`--json` is added after them)."""

    def progress_bar(self, options: dict[str, Any], *, disable: bool = False, **kwargs: Any) -> tqdm:
        """A tqdm bar on stderr, off with `--no-progress` or `--json`."""
        return tqdm(disable=disable or options["no_progress"] or options["json"], **kwargs)

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
            if self.takes_project:
                self.project = project_named(options["project"])
            if self.takes_release:
                self.release = release_keyed(self.project, options["release"])
            if self.takes_batch:
                self.batch = batch_named(self.project, options["batch"])
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

"""Store LaTeX sources as papers with tables, paragraphs and contexts; one transaction per source. Each source is
read inline through the same bounded child process as the worker's ingestion jobs (TATCURATE_INGEST_* limits)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser
from django.template.defaultfilters import pluralize
from tqdm import tqdm

from curation.errors import DomainError
from curation.management.base import ReportCommand
from curation.management.lookup import batch_named
from curation.papers.ingestion import paper_ingest_bounded
from curation.papers.services import NEW_VERSION, IngestResult


class Command(ReportCommand):
    takes_project = True
    shows_progress = True
    help = "Ingest .tex files, source folders or arXiv-style archives into a project (idempotent per source)."

    json_help = "print one JSON summary on stdout (else a line per source as it is read)"
    json_indent = 2

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument(
            "paths", nargs="+", type=Path, help=".tex files, source folders or .tar.gz/.tgz/.zip/.gz archives"
        )
        parser.add_argument("--batch", type=int, default=None, help="put the new contexts in this batch (id)")

    def report(self, options: dict[str, Any]) -> dict[str, Any]:
        batch = None if options["batch"] is None else batch_named(self.project, options["batch"])
        results: list[IngestResult] = []
        rejected: list[dict[str, str]] = []
        bar = self.progress_bar(options, iterable=options["paths"], desc="ingest", unit="paper")
        for path in bar:
            bar.set_postfix_str(path.name[:40])
            try:
                result = paper_ingest_bounded(project=self.project, actor=None, path=path, batch=batch)
            except DomainError as error:
                rejected.append({"source_name": path.name, "reason": error.message})
                if not options["json"]:
                    self._say(self.style.ERROR(f"rejected {path}: {error.message}"))
                continue
            results.append(result)
            if not options["json"]:
                self._say(self._line(result))
        bar.close()
        return {
            "project": self.project.slug,
            "papers": [result.as_dict() for result in results],
            "rejected": rejected,
            "counts": {
                status: sum(1 for result in results if result.status == status)
                for status in ("created", "unchanged", NEW_VERSION)
            }
            | {"rejected": len(rejected)},
        }

    def refusal(self, result: dict[str, Any]) -> str | None:
        if not (rejected := result["rejected"]):
            return None
        names = ", ".join(item["source_name"] for item in rejected)
        inputs = len(rejected) + len(result["papers"])
        return f"{len(rejected)} of {inputs} input{pluralize(inputs)} rejected ({names}); the others were stored"

    def _say(self, line: str) -> None:
        # Lift the bar off stderr while the line goes to stdout, so the two do not garble each other.
        with tqdm.external_write_mode(file=sys.stderr):
            self.stdout.write(line)

    def _line(self, result: IngestResult) -> str:
        status = f"new version {result.paper.version}" if result.status == NEW_VERSION else result.status
        return (
            f"{result.source_name}: {status} — paper {result.paper.pk} “{result.paper.title[:60]}”, "
            f"{result.tables} tables, {result.paragraphs} paragraphs, "
            f"{result.contexts} contexts ({result.short_contexts} short, {result.long_contexts} long), "
            f"{len(result.warnings)} warnings" + (f" — flagged: {result.flag}" if result.flag else "")
        )

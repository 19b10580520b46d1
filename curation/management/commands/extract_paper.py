"""Print what the LaTeX extractor finds in a paper source; needs no database."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from curation.latex import ArchiveLimits, UnsafeArchiveError, extract_paper
from curation.latex.archive import MIB


class Command(BaseCommand):
    help = "Extract tables, paragraphs and table mentions from a .tex file, a folder or an archive."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="a .tex file, a source folder, or a .tar.gz/.tgz/.tar/.zip/.gz archive")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--main-file", default=None, help="use this file (relative to the source) as main")
        parser.add_argument("--max-compressed-mib", type=float, default=50)
        parser.add_argument("--max-uncompressed-mib", type=float, default=200)
        parser.add_argument("--max-members", type=int, default=2000)
        parser.add_argument("--max-ratio", type=float, default=100)

    def handle(self, *args: Any, **options: Any) -> None:
        limits = ArchiveLimits(
            max_compressed_bytes=int(options["max_compressed_mib"] * MIB),
            max_uncompressed_bytes=int(options["max_uncompressed_mib"] * MIB),
            max_members=options["max_members"],
            max_ratio=options["max_ratio"],
        )
        try:
            result = extract_paper(options["path"], limits=limits, main_file=options["main_file"])
        except UnsafeArchiveError as error:
            raise CommandError(f"archive rejected: {error}") from error
        except OSError as error:
            raise CommandError(f"cannot read {options['path']}: {error}") from error
        if options["json"]:
            self.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
            return
        self.stdout.write(f"main file: {result.main_file}  title: {result.title}")
        for table in result.tables:
            shape = f"{len(table.rows)}x{max((len(row) for row in table.grid), default=0)}"
            header = f", {table.header_rows} header row{'' if table.header_rows == 1 else 's'}"
            self.stdout.write(
                f"table {table.number or '-'} [{table.label}] {table.kind} {shape}{header}: {table.caption}"
            )
        linked = sum(1 for paragraph in result.paragraphs if paragraph.mentions)
        self.stdout.write(f"{len(result.paragraphs)} paragraphs, {linked} mention tables")
        for warning in result.warnings:
            self.stdout.write(self.style.WARNING(f"warning: {warning}"))

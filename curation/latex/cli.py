"""The `extract_paper` command line: the pure extractor, run without Django's settings, apps or database.

`manage.py extract_paper …` comes here before Django is set up; the management command of the same name
(for `call_command`) parses the same arguments and prints through `run`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict

from curation.latex.archive import MIB, ArchiveLimits, UnsafeArchiveError
from curation.latex.extract import extract_paper

TYPE_CHECKING = False  # `typing` is imported for type checkers only: a fresh process would pay for it
if TYPE_CHECKING:
    from typing import Any


class ExtractError(Exception):
    """A source the command cannot read (a refused archive, a missing file): printed as an error."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's arguments, shared by this CLI and the Django management command."""
    parser.add_argument("path", help="a .tex file, a source folder, or a .tar.gz/.tgz/.tar/.zip/.gz archive")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--main-file", default=None, help="use this file (relative to the source) as main")
    parser.add_argument("--max-compressed-mib", type=float, default=50)
    parser.add_argument("--max-uncompressed-mib", type=float, default=200)
    parser.add_argument("--max-members", type=int, default=2000)
    parser.add_argument("--max-ratio", type=float, default=100)


def run(options: dict[str, Any], write: Callable[[str], Any], warn: Callable[[str], str] = str) -> None:
    """Extract the paper named in `options` and write the report (one JSON object with `--json`)."""
    limits = ArchiveLimits(
        max_compressed_bytes=int(options["max_compressed_mib"] * MIB),
        max_uncompressed_bytes=int(options["max_uncompressed_mib"] * MIB),
        max_members=options["max_members"],
        max_ratio=options["max_ratio"],
    )
    try:
        result = extract_paper(options["path"], limits=limits, main_file=options["main_file"])
    except UnsafeArchiveError as error:
        raise ExtractError(f"archive rejected: {error}") from error
    except OSError as error:
        raise ExtractError(f"cannot read {options['path']}: {error}") from error
    if options["json"]:
        write(json.dumps(asdict(result), ensure_ascii=False, indent=2))
        return
    write(f"main file: {result.main_file}  title: {result.title}")
    for table in result.tables:
        shape = f"{len(table.rows)}x{max((len(row) for row in table.grid), default=0)}"
        header = f", {table.header_rows} header row{'' if table.header_rows == 1 else 's'}"
        write(f"table {table.number or '-'} [{table.label}] {table.kind} {shape}{header}: {table.caption}")
    linked = sum(1 for paragraph in result.paragraphs if paragraph.mentions)
    write(f"{len(result.paragraphs)} paragraphs, {linked} mention tables")
    for warning in result.warnings:
        write(warn(f"warning: {warning}"))


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, sized without `shutil`: argparse imports it (and bz2, lzma) for the terminal width of
    every parser, help printed or not, and a fresh process on one paper pays for each import."""

    def __init__(self, prog: str) -> None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 80
        super().__init__(prog, width=max(columns, 22) - 2)


def main(argv: list[str] | None = None) -> int:
    """`python manage.py extract_paper PATH [--json]` without Django; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="manage.py extract_paper", description=__doc__.splitlines()[0], formatter_class=_HelpFormatter
    )
    add_arguments(parser)
    options = vars(parser.parse_args(argv))
    try:
        run(options, lambda line: sys.stdout.write(line + "\n"))
    except ExtractError as error:
        sys.stderr.write(f"CommandError: {error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

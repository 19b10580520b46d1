"""Score a benchmark prediction file from the command line, without touching the database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from scoring.metrics import benchmarks, files, tatqa

UNKNOWN_UIDS_SHOWN = 10


class Command(BaseCommand):
    """`score_predictions --format tatqa|tatdqa|finqa|scitat --gold GOLD --pred PRED [...]`."""

    help = "Score a TAT-QA / TAT-DQA / FinQA / SciTaT prediction file with the official metrics (no database)."
    # Pure file-in, figures-out: no system checks or migration checks, so it runs without a database.
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the CLI of issue 4."""
        parser.add_argument("--format", required=True, choices=benchmarks.FORMATS, dest="benchmark")
        parser.add_argument("--gold", required=True, type=Path, help="the benchmark's own gold file")
        parser.add_argument("--pred", required=True, type=Path, help="the prediction file in the benchmark's format")
        parser.add_argument(
            "--mode",
            default="official",
            choices=tatqa.MODES,
            help="official: the benchmark's own script, quirks included; fixed: ours (README › Scoring); "
            "tatllm: TAT-LLM's metric fork (TAT-QA / TAT-DQA only)",
        )
        parser.add_argument(
            "--scale",
            default="predicted",
            choices=tatqa.SCALE_MODES,
            help="use the predicted scale, or ignore scale on both sides (zero-shot models)",
        )
        parser.add_argument(
            "--numeric-tolerance", action="store_true", help="TAT-LLM's tolerance for arithmetic answers"
        )
        parser.add_argument("--no-bertscore", action="store_true", help="SciTaT: skip BERTScore")
        parser.add_argument("--details", type=Path, help="write one JSON line per gold question to this file")
        parser.add_argument("--json", action="store_true", help="print the aggregate as one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        """Load, validate, score, report."""
        bertscorer = None
        if options["benchmark"] == "scitat" and not options["no_bertscore"]:
            from scoring.metrics import bertscore

            try:
                bertscorer = bertscore.default_scorer()
            except bertscore.BertScoreUnavailableError as error:
                raise CommandError(f"BERTScore unavailable: {error} (use --no-bertscore)") from error
        try:
            scored = benchmarks.score_files(
                options["benchmark"],
                options["gold"],
                options["pred"],
                mode=options["mode"],
                scale_mode=options["scale"],
                numeric_tolerance=options["numeric_tolerance"],
                bertscorer=bertscorer,
            )
        except files.PredictionFileError as error:
            raise CommandError(str(error)) from error
        if scored.unknown_uids:
            shown = ", ".join(scored.unknown_uids[:UNKNOWN_UIDS_SHOWN])
            more = len(scored.unknown_uids) - UNKNOWN_UIDS_SHOWN
            suffix = f" and {more} more" if more > 0 else ""
            count = len(scored.unknown_uids)
            self.stderr.write(f"{options['pred']}: {count} uid(s) not in {options['gold']}, ignored: {shown}{suffix}")
        if options["details"]:
            with options["details"].open("w", encoding="utf-8") as handle:
                for row in scored.details:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        if options["json"]:
            self.stdout.write(json.dumps(scored.summary, ensure_ascii=False, sort_keys=True))
        else:
            for line in files.summary_lines(scored.summary):
                self.stdout.write(line)

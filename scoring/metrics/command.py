"""The file-scoring command, pure: its arguments and its run, shared by `python -m scoring.metrics` (no Django) and
the `score_predictions` management command, so both print the same figures."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from scoring.metrics import benchmarks, files, tatqa


class CommandFailure(ValueError):
    """A file could not be scored; the message names the file, the uid and the fault."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`--format tatqa|tatdqa|finqa|scitat --gold GOLD --pred PRED [--mode] [--scale] [...]`."""
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
    parser.add_argument("--numeric-tolerance", action="store_true", help="TAT-LLM's tolerance for arithmetic answers")
    parser.add_argument("--no-bertscore", action="store_true", help="SciTaT: skip BERTScore")
    parser.add_argument("--details", type=Path, help="write one JSON line per gold question to this file")
    parser.add_argument("--json", action="store_true", help="print the aggregate as one JSON object")


def run(options: Mapping[str, Any], *, out: Callable[[str], Any], err: Callable[[str], Any]) -> None:
    """Load, validate, score and report one prediction file; `out`/`err` write one line each."""
    bertscorer = None
    if benchmarks.scorer_of(options["benchmark"]).uses_bertscore and not options["no_bertscore"]:
        from scoring.metrics import bertscore  # numpy and the model only when SciTaT's BERTScore is wanted

        try:
            bertscorer = bertscore.default_scorer()
        except bertscore.BertScoreUnavailableError as error:
            raise CommandFailure(f"BERTScore unavailable: {error} (use --no-bertscore)") from error
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
        raise CommandFailure(str(error)) from error
    if unknown := scored.unknown_uids:
        listed = benchmarks.uids_listed(unknown)
        err(f"{options['pred']}: uids not in {options['gold']} ({len(unknown)}), ignored: {listed}")
    if options["details"]:
        with Path(options["details"]).open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in scored.details)
    if options["json"]:
        out(json.dumps(scored.summary, ensure_ascii=False, sort_keys=True))
    else:
        for line in benchmarks.summary_lines(scored.summary):
            out(line)

"""Uploaded predictions: read a file in any format of scoring/metrics/files.py (or our JSONL) into uid → prediction,
and score a gold + prediction pair with the official figures (the same code as the `score_predictions` command)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from curation.errors import InvalidInput
from curation.releases.models import Release
from curation.toolkit.strict_json import JsonInputError, json_loads_strict
from scoring.metrics import benchmarks, files
from scoring.runs.creation import run_create
from scoring.runs.lifecycle import run_start
from scoring.runs.models import ScoringRun

UPLOAD_FORMATS = ("jsonl", "tatqa", "scitat", "finqa")


def _with_file(content: bytes, reader: Any) -> Any:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "upload.json"
        path.write_bytes(content)
        try:
            return reader(path)
        except files.PredictionFileError as error:
            raise InvalidInput(str(error).replace(str(path), "the file")) from error


def _items(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


def predictions_read(*, format: str, content: bytes) -> dict[str, dict[str, Any]]:
    """uid → {answer: [items], scale, program_tokens?, raw_output?}; InvalidInput names the fault."""
    if format == "jsonl":
        predictions: dict[str, dict[str, Any]] = {}
        for number, line in enumerate(content.decode("utf-8", errors="replace").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json_loads_strict(line)
            except JsonInputError as error:
                raise InvalidInput(error.one_line(number)) from error
            if not isinstance(record, dict) or not record.get("uid"):
                raise InvalidInput(f"line {number}: expected an object with 'uid' and 'answer'")
            predictions[str(record["uid"])] = {
                "answer": _items(record.get("answer")),
                "scale": str(record.get("scale") or ""),
                "raw_output": str(record.get("raw_output") or ""),
            }
            trace = record.get("tool_trace")
            if trace is not None:
                is_calls = isinstance(trace, list) and all(isinstance(s, dict) and s.get("name") for s in trace)
                if not is_calls:
                    raise InvalidInput(f"line {number}: 'tool_trace' is a list of calls {{name, arguments, result}}")
                predictions[str(record["uid"])]["tool_trace"] = trace
        return predictions
    if format in ("tatqa", "tatdqa"):
        loaded = _with_file(content, files.load_tatqa_predictions)
        return {uid: {"answer": _items(answer), "scale": scale or ""} for uid, (answer, scale) in loaded.items()}
    if format == "scitat":
        from scoring.metrics import scitat

        loaded = _with_file(content, files.load_scitat_predictions)
        return {uid: {"answer": scitat.prediction_items(value), "scale": ""} for uid, value in loaded}
    if format == "finqa":
        programs, answers = _with_file(content, files.load_finqa_predictions)
        result: dict[str, dict[str, Any]] = {
            uid: {"answer": _items(value), "scale": ""} for uid, value in answers.items()
        }
        for uid, tokens in programs:
            result[uid] = {"answer": [], "scale": "", "program_tokens": list(tokens)}
        return result
    raise InvalidInput(f"Unknown predictions format {format!r}; expected one of {', '.join(UPLOAD_FORMATS)}.")


def upload_run_create(
    *,
    release: Release,
    actor: AbstractBaseUser | None,
    format: str,
    name: str,
    content: bytes,
    label: str = "",
    method: str = "",
    setting: str = "short",
    few_shot: int = 0,
    tools: str = "all",
) -> ScoringRun:
    """Score an uploaded predictions file against a release: a run of method 'upload', scored at once (managers and
    verifiers). uids the release does not hold are ignored; release items the file lacks count as unanswered.
    `method`, `setting`, `few_shot` and `tools` declare the experiment the file comes from, so comparisons place it
    (a JSONL line may carry the `tool_trace` of a tool-loop run, scored against the essential actions)."""
    predictions = predictions_read(format=format, content=content)
    if not predictions:
        raise InvalidInput("The file holds no predictions.")
    known = set(release.items.values_list("uid", flat=True))
    if not known & set(predictions):
        raise InvalidInput("None of the file's ids is a question of this release.")
    run = run_create(
        release=release,
        actor=actor,
        method="upload",
        uploaded={uid: value for uid, value in predictions.items() if uid in known},
        upload_name=name,
        upload_format=format,
        label=label or name,
        chunk_size=500,
        reported_method=method,
        setting=setting,
        few_shot=few_shot,
        tools=tools,
    )
    return run_start(run=run, actor=actor)


def official_figures(*, benchmark: str, gold: bytes, predictions: bytes) -> dict[str, Any]:
    """The official script's figures for a gold file and a prediction file (nothing is stored)."""
    if benchmark not in benchmarks.FORMATS:
        raise InvalidInput(f"Unknown benchmark {benchmark!r}; expected one of {', '.join(benchmarks.FORMATS)}.")
    with tempfile.TemporaryDirectory() as directory:
        gold_path, prediction_path = Path(directory) / "gold.json", Path(directory) / "predictions.json"
        gold_path.write_bytes(gold)
        prediction_path.write_bytes(predictions)
        scorer = None
        if benchmark == "scitat":
            from scoring.runs.progress import bertscorer_load

            scorer = bertscorer_load()
        try:
            scored = benchmarks.score_files(benchmark, gold_path, prediction_path, bertscorer=scorer)
        except files.PredictionFileError as error:
            message = (
                str(error).replace(str(gold_path), "the gold file").replace(str(prediction_path), "the predictions")
            )
            raise InvalidInput(message) from error
    return {
        "summary": scored.summary,
        "lines": files.summary_lines(scored.summary),
        "unknown_uids": scored.unknown_uids,
        "count": len(scored.details),
    }

"""Uploaded predictions: read a file in any benchmark's format (its scorer reads it), our JSONL or a harness log into
uid → prediction, and score a gold + prediction pair with the official figures (as the `score_predictions` command)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import UploadedFile

from curation.endpoints.models import ModelEndpoint
from curation.errors import InvalidInput
from curation.releases.models import Release
from curation.toolkit.extraction import EXTRACTION_MODES
from curation.toolkit.strict_json import JsonInputError, json_loads_strict
from curation.uploads import upload_read
from scoring.metrics import benchmarks, files
from scoring.runs.creation import run_create
from scoring.runs.harness import HarnessLogError, answer_of, log_completions
from scoring.runs.lifecycle import run_start
from scoring.runs.models import ScoringRun
from scoring.runs.progress import bertscorer_load

# The files an upload reads, by format, as the upload form names them.
UPLOAD_FORMATS = {
    "jsonl": "JSON lines: uid, answer, scale",
    "tatqa": "TAT-QA / TAT-DQA predictions",
    "scitat": "SciTaT predictions",
    "finqa": "FinQA predictions",
    "inspect": "Inspect AI log of the harness task (.eval, .json)",
    "lm_eval": "lm-evaluation-harness samples (samples_*.jsonl)",
}


def predictions_read(
    *, format: str, content: bytes, extraction: str = "default", method: str = ""
) -> dict[str, dict[str, Any]]:
    """uid → {answer: [items], scale, program_tokens?, raw_output?}; InvalidInput names the fault. Model text (a
    JSONL line with `raw_output` and no `answer`, SciTaT's `response`/`output`) is read with the run's `extraction`
    (default, or official: SciTaT's scripts)."""
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
            raw_output = str(record.get("raw_output") or "")
            answer, scale = benchmarks.answer_items(record.get("answer")), str(record.get("scale") or "")
            if "answer" not in record and raw_output:  # model text, read as a run reads it
                read = answer_of(raw_output, method=method or "direct", extraction=extraction)
                answer, scale = read["answer"], read["scale"]
            predictions[str(record["uid"])] = {"answer": answer, "scale": scale, "raw_output": raw_output}
            trace = record.get("tool_trace")
            if trace is not None:
                is_calls = isinstance(trace, list) and all(isinstance(s, dict) and s.get("name") for s in trace)
                if not is_calls:
                    raise InvalidInput(f"line {number}: 'tool_trace' is a list of calls {{name, arguments, result}}")
                predictions[str(record["uid"])]["tool_trace"] = trace
        return predictions
    if format in benchmarks.SCORERS:  # the benchmark's scorer reads its own file format
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "upload.json"
            path.write_bytes(content)
            try:
                return benchmarks.SCORERS[format].predictions_read(path, extraction=extraction)
            except files.PredictionFileError as error:
                raise InvalidInput(str(error).replace(str(path), "the file")) from error
    if format in ("inspect", "lm_eval"):
        try:
            completions = log_completions(content, harness=format)
        except HarnessLogError as error:
            raise InvalidInput(f"The {format} log: {error}.") from error
        # The answer and scale the task's scorer read from the text (its method's extraction), so the run's figures
        # are the ones the log's scorer recorded.
        return {
            uid: {**answer_of(found["raw_output"], method=found["method"], extraction=extraction), **found}
            for uid, found in completions.items()
        }
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
    extraction: str = "default",
    few_shot: int = 0,
    tools: str = "all",
    scale_mode: str = "predicted",
    bertscore: str = "minilm",
    judge: ModelEndpoint | None = None,
) -> ScoringRun:
    """Score an uploaded predictions file against a release: a run of method 'upload', scored at once (managers and
    verifiers). uids the release does not hold are ignored; release items the file lacks count as unanswered.
    `method`, `setting`, `few_shot` and `tools` declare the experiment the file comes from, so comparisons place it (a
    JSONL line may carry the `tool_trace` of a tool-loop run, scored against the essential actions). The scoring
    options are a run's (`run_create`'s): `extraction` (how model text in the file is read), `scale_mode`, the
    `bertscore` model and an optional `judge` of the free-form answers."""
    if extraction not in EXTRACTION_MODES:  # checked before the file is read with it; run_create checks the rest
        raise InvalidInput(f"The answer extraction is {' or '.join(EXTRACTION_MODES)}.")
    predictions = predictions_read(format=format, content=content, extraction=extraction, method=method)
    # A harness log says the experiment itself (each sample's method and setting): it fills what the form left open.
    stated = {key: {p.pop(key) for p in predictions.values() if key in p} for key in ("method", "setting")}
    if len(stated["method"]) == 1 and not method:
        method = stated["method"].pop()
    if len(stated["setting"]) == 1:
        setting = stated["setting"].pop()
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
        extraction=extraction,
        few_shot=few_shot,
        tools=tools,
        scale_mode=scale_mode,
        bertscore=bertscore,
        judge=judge,
    )
    return run_start(run=run, actor=actor)


def official_figures(*, benchmark: str, gold: UploadedFile, predictions: UploadedFile) -> dict[str, Any]:
    """The official script's figures for an uploaded gold file and prediction file (nothing is stored)."""
    gold_content, prediction_content = upload_read(gold), upload_read(predictions)
    if benchmark not in benchmarks.FORMATS:
        raise InvalidInput(f"Unknown benchmark {benchmark!r}; expected one of {', '.join(benchmarks.FORMATS)}.")
    with tempfile.TemporaryDirectory() as directory:
        gold_path, prediction_path = Path(directory) / "gold.json", Path(directory) / "predictions.json"
        gold_path.write_bytes(gold_content)
        prediction_path.write_bytes(prediction_content)
        bertscorer = bertscorer_load() if benchmarks.SCORERS[benchmark].uses_bertscore else None
        try:
            scored = benchmarks.score_files(benchmark, gold_path, prediction_path, bertscorer=bertscorer)
        except files.PredictionFileError as error:
            message = (
                str(error).replace(str(gold_path), "the gold file").replace(str(prediction_path), "the predictions")
            )
            raise InvalidInput(message) from error
    return {
        "summary": scored.summary,
        "lines": benchmarks.summary_lines(scored.summary),
        "unknown_uids": scored.unknown_uids,
        "count": len(scored.details),
    }

"""Read and validate benchmark gold and prediction files (errors name file, uid and fault), and score them.

Shared by the `score_predictions` command and the web application, so both report the same figures.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.toolkit.strict_json import JsonInputError, json_loads_strict
from scoring.metrics import finqa, scitat, tatqa

FORMATS: tuple[str, ...] = ("tatqa", "tatdqa", "finqa", "scitat")


class PredictionFileError(ValueError):
    """A gold or prediction file is malformed; the message names the file, the uid or index, and the fault."""


@dataclass
class ScoredFile:
    """The aggregate figures, one detail row per gold question, and the uids that were not in the gold file."""

    summary: dict[str, Any]
    details: list[dict[str, Any]]
    unknown_uids: list[str] = field(default_factory=list)


def read_json(path: Path) -> Any:
    """Parse a JSON file or raise PredictionFileError naming it and the line of the fault."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise PredictionFileError(f"{path}: cannot read ({error.strerror or error})") from error
    try:
        return json_loads_strict(text)
    except JsonInputError as error:
        where = f"not valid JSON at line {error.line} column {error.column}: {error.reason}" if error.reason else error
        raise PredictionFileError(f"{path}: {where}") from error


def load_tatqa_gold(path: Path) -> list[dict[str, Any]]:
    """A TAT-QA / TAT-DQA file: a list of documents, each with `questions` holding `uid`, `answer`, `answer_type`."""
    data = read_json(path)
    if not isinstance(data, list):
        raise PredictionFileError(f"{path}: expected a list of documents, got {type(data).__name__}")
    for index, document in enumerate(data):
        if not isinstance(document, dict) or not isinstance(document.get("questions"), list):
            raise PredictionFileError(f"{path}: document {index} has no 'questions' list")
        for question in document["questions"]:
            uid = question.get("uid") if isinstance(question, dict) else None
            if not uid:
                raise PredictionFileError(f"{path}: document {index} has a question without 'uid'")
            missing = [key for key in ("answer", "answer_type") if key not in question]
            if missing:
                raise PredictionFileError(f"{path}: uid {uid}: missing {', '.join(missing)}")
    return data


def load_tatqa_predictions(path: Path) -> dict[str, tuple[Any, str | None]]:
    """`{uid: [answer, scale]}`; the answer is a string, a number or a list, the scale a string (or null)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise PredictionFileError(f"{path}: expected an object {{uid: [answer, scale]}}, got {type(data).__name__}")
    predictions: dict[str, tuple[Any, str | None]] = {}
    for uid, value in data.items():
        if not isinstance(value, list) or len(value) != 2:
            raise PredictionFileError(f"{path}: uid {uid}: expected [answer, scale], got {json.dumps(value)[:80]}")
        answer, scale = value
        if scale is not None and not isinstance(scale, str):
            raise PredictionFileError(f"{path}: uid {uid}: scale must be a string, got {json.dumps(scale)}")
        if isinstance(answer, dict):
            raise PredictionFileError(f"{path}: uid {uid}: answer must be a string, a number or a list")
        predictions[uid] = (answer, scale)
    return predictions


def load_finqa_gold(path: Path) -> list[dict[str, Any]]:
    """A FinQA file: records with `id`, `table` and `qa.program` / `qa.exe_ans` (or flat `program` / `answer`)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise PredictionFileError(f"{path}: expected a list of records, got {type(data).__name__}")
    for index, record in enumerate(data):
        uid = record.get("id") if isinstance(record, dict) else None
        if not uid:
            raise PredictionFileError(f"{path}: record {index} has no 'id'")
        try:
            finqa.gold_fields(record)
        except KeyError as error:
            raise PredictionFileError(f"{path}: id {uid}: missing {error.args[0]!r}") from error
    return data


def load_finqa_predictions(path: Path) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """`[{"id", "predicted": [tokens]}]` programs, or `[{"id", "answer": number}]` for numeric answers."""
    data = read_json(path)
    if not isinstance(data, list):
        raise PredictionFileError(
            f"{path}: expected a list of {{'id', 'predicted'}} objects, got {type(data).__name__}"
        )
    programs: dict[str, list[str]] = {}
    answers: dict[str, Any] = {}
    for index, entry in enumerate(data):
        if not isinstance(entry, dict) or "id" not in entry:
            raise PredictionFileError(f"{path}: entry {index} has no 'id'")
        uid = str(entry["id"])
        if "predicted" in entry:
            tokens = entry["predicted"]
            if not isinstance(tokens, list) or not all(isinstance(token, str) for token in tokens):
                raise PredictionFileError(f"{path}: id {uid}: 'predicted' must be a list of token strings")
            programs[uid] = tokens
        elif "answer" in entry:
            answers[uid] = entry["answer"]
        else:
            raise PredictionFileError(f"{path}: id {uid}: needs 'predicted' (program tokens) or 'answer'")
    return programs, answers


def load_scitat_gold(path: Path) -> list[dict[str, Any]]:
    """A SciTaT file: a list of records with `id` and `answer` (a list of items or a string)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise PredictionFileError(f"{path}: expected a list of records, got {type(data).__name__}")
    for index, record in enumerate(data):
        uid = record.get("id") if isinstance(record, dict) else None
        if not uid:
            raise PredictionFileError(f"{path}: record {index} has no 'id'")
        if "answer" not in record:
            raise PredictionFileError(f"{path}: id {uid}: missing 'answer'")
    return data


def load_scitat_predictions(path: Path) -> dict[str, Any]:
    """`{id: [answer items]}` or `{id: "model text"}` (the text after `Answer:` is used)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise PredictionFileError(f"{path}: expected an object {{id: [items] or text}}, got {type(data).__name__}")
    for uid, value in data.items():
        is_items = isinstance(value, list) and all(isinstance(item, str | int | float) for item in value)
        if not (isinstance(value, str) or is_items):
            raise PredictionFileError(f"{path}: id {uid}: expected a list of answer items or a string")
    return data


def score_files(
    benchmark: str,
    gold_path: Path,
    prediction_path: Path,
    *,
    mode: tatqa.Mode = "official",
    scale_mode: tatqa.ScaleMode = "predicted",
    numeric_tolerance: bool = False,
    bertscorer: scitat.TextScorer | None = None,
) -> ScoredFile:
    """Score one prediction file against one gold file of the given benchmark."""
    if benchmark in ("tatqa", "tatdqa"):
        gold = load_tatqa_gold(gold_path)
        predictions = load_tatqa_predictions(prediction_path)
        try:
            report = tatqa.score_dataset(
                gold, predictions, mode=mode, scale_mode=scale_mode, numeric_tolerance=numeric_tolerance
            )
        except ValueError as error:
            raise PredictionFileError(f"{prediction_path}: {error}") from error
        summary = {"format": benchmark, **report.summary()}
        details = [
            {
                "uid": score.uid,
                "em": score.em,
                "f1": score.f1,
                "is_scale_correct": score.is_scale_correct,
                "answer_type": score.answer_type,
                "answer_from": score.answer_from,
            }
            for score in report.questions
        ]
        return ScoredFile(summary, details, report.unknown_uids)
    if benchmark == "finqa":
        gold = load_finqa_gold(gold_path)
        programs, answers = load_finqa_predictions(prediction_path)
        report = finqa.score_dataset(gold, programs, numeric_answers=answers)
        summary = {"format": benchmark, "em": report.execution_accuracy, "f1": None, **report.summary()}
        details = [
            {
                "uid": score.uid,
                "em": float(score.exe_correct),
                "f1": None,
                "exe_correct": score.exe_correct,
                "prog_correct": score.prog_correct,
                "numeric_correct": score.numeric_correct,
            }
            for score in report.questions
        ]
        return ScoredFile(summary, details, report.unknown_uids)
    if benchmark == "scitat":
        gold = load_scitat_gold(gold_path)
        predictions = load_scitat_predictions(prediction_path)
        report = scitat.score_dataset(gold, predictions, bertscorer=bertscorer, mode=mode)
        summary = {"format": benchmark, "mode": mode, **report.summary()}
        details = [
            {
                "uid": score.uid,
                "em": score.em,
                "f1": score.f1,
                "short_form": score.short_form,
                "bertscore": score.bertscore,
            }
            for score in report.questions
        ]
        return ScoredFile(summary, details, report.unknown_uids)
    raise PredictionFileError(f"unknown format {benchmark!r}; expected one of {', '.join(FORMATS)}")


def summary_lines(summary: Mapping[str, Any]) -> list[str]:
    """Human-readable lines in the official scripts' style (percentages with 2 decimals)."""
    lines = []
    labels = {
        "em": "Exact-match accuracy",
        "f1": "F1 score",
        "scale_accuracy": "Scale score",
        "execution_accuracy": "Execution accuracy",
        "program_accuracy": "Program accuracy",
        "execution_accuracy_over_predictions": "Execution accuracy (over predictions)",
        "program_accuracy_over_predictions": "Program accuracy (over predictions)",
        "numeric_accuracy": "Numeric-answer accuracy",
        "bertscore": "BERTScore F1",
    }
    for key, label in labels.items():
        value = summary.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            lines.append(f"{label} {value * 100:.2f}")
    for key in ("mode", "scale_mode", "count", "prediction_count", "short_form_count", "free_form_count"):
        if key in summary:
            lines.append(f"{key}: {summary[key]}")
    if summary.get("bertscore_info"):
        info = summary["bertscore_info"]
        lines.append(f"bertscore: {info['metric']} (model {info['model']}, layer {info['layer']})")
    return lines

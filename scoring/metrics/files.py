"""Read and validate benchmark gold and prediction files (errors name file, uid and fault).

Shared by the `score_predictions` command and the web application (through scoring/metrics/benchmarks.py), so both
read the same files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.toolkit.strict_json import JsonInputError, json_loads_strict


class PredictionFileError(ValueError):
    """A gold or prediction file is malformed; the message names the file, the uid or index, and the fault."""


@dataclass
class ScoredFile:
    """The aggregate figures, one detail row per gold question, and the uids that were not in the gold file."""

    summary: dict[str, Any]
    details: list[dict[str, Any]]
    unknown_uids: list[str] = field(default_factory=list)


def read_json(path: Path, *, allow_non_finite: bool = False) -> Any:
    """Parse a JSON file or raise PredictionFileError naming it and the line of the fault (NaN and ±Infinity are
    faults unless `allow_non_finite`)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise PredictionFileError(f"{path}: cannot read ({error.strerror or error})") from error
    except UnicodeDecodeError as error:
        raise PredictionFileError(
            f"{path}: not UTF-8 text (byte {error.start} cannot be read); upload a JSON file"
        ) from error
    try:
        return json_loads_strict(text, allow_non_finite=allow_non_finite)
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
    """`{uid: [answer, scale]}`; the answer is a string, a number or a list (anything else is scored as its text, as
    the official script does), the scale a string (or null). NaN and ±Infinity are read, as tatqa_eval.py's json.load
    reads them: the metric scores such a row wrong and marks it."""
    data = read_json(path, allow_non_finite=True)
    if not isinstance(data, dict):
        raise PredictionFileError(f"{path}: expected an object {{uid: [answer, scale]}}, got {type(data).__name__}")
    predictions: dict[str, tuple[Any, str | None]] = {}
    for uid, value in data.items():
        if not isinstance(value, list) or len(value) != 2:
            raise PredictionFileError(f"{path}: uid {uid}: expected [answer, scale], got {json.dumps(value)[:80]}")
        answer, scale = value
        if scale is not None and not isinstance(scale, str):
            raise PredictionFileError(f"{path}: uid {uid}: scale must be a string, got {json.dumps(scale)}")
        # A dict answer is scored as its text (str(dict)), as tatqa_eval.py does; it matches nothing real.
        predictions[uid] = (answer, scale)
    return predictions


def load_gold_records(path: Path, read: Callable[[dict[str, Any]], Any]) -> list[dict[str, Any]]:
    """A FinQA or SciTaT gold file: a list of records, each with an `id` and what `read` takes from it (a KeyError
    names what is missing)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise PredictionFileError(f"{path}: expected a list of records, got {type(data).__name__}")
    for index, record in enumerate(data):
        uid = record.get("id") if isinstance(record, dict) else None
        if not uid:
            raise PredictionFileError(f"{path}: record {index} has no 'id'")
        try:
            read(record)
        except KeyError as error:
            raise PredictionFileError(f"{path}: id {uid}: missing {error.args[0]!r}") from error
    return data


def load_finqa_predictions(path: Path) -> tuple[list[tuple[str, list[str]]], dict[str, Any]]:
    """`[{"id", "predicted": [tokens]}]` programs as (id, tokens) pairs in file order, duplicates kept (the official
    script scores each), or `[{"id", "answer": number}]` for numeric answers."""
    data = read_json(path)
    if not isinstance(data, list):
        raise PredictionFileError(
            f"{path}: expected a list of {{'id', 'predicted'}} objects, got {type(data).__name__}"
        )
    programs: list[tuple[str, list[str]]] = []
    answers: dict[str, Any] = {}
    for index, entry in enumerate(data):
        if not isinstance(entry, dict) or "id" not in entry:
            raise PredictionFileError(f"{path}: entry {index} has no 'id'")
        uid = str(entry["id"])
        if "predicted" in entry:
            tokens = entry["predicted"]
            if not isinstance(tokens, list) or not all(isinstance(token, str) for token in tokens):
                raise PredictionFileError(f"{path}: id {uid}: 'predicted' must be a list of token strings")
            programs.append((uid, tokens))
        elif "answer" in entry:
            answers[uid] = entry["answer"]
        else:
            raise PredictionFileError(f"{path}: id {uid}: needs 'predicted' (program tokens) or 'answer'")
    return programs, answers


# SciTaT's evaluate.py reads these keys of a prediction record, first match wins.
SCITAT_PREDICTION_KEYS = ("pred", "predict", "answer", "response", "output")


def _scitat_items(path: Path, uid: str, value: Any) -> bool:
    is_items = isinstance(value, list) and all(
        isinstance(item, str | int | float) and not isinstance(item, bool) for item in value
    )
    if not (isinstance(value, str) or is_items):
        raise PredictionFileError(f"{path}: id {uid}: expected a list of answer items or a string")
    return is_items


def _scitat_record_prediction(path: Path, uid: str, record: Mapping[str, Any]) -> list[Any] | str:
    """One record of SciTaT's list layout as items (pred, predict, answer split on blank lines) or model text."""
    if "pred" in record or "predict" in record:
        key = "pred" if "pred" in record else "predict"
        value = record[key]
        # evaluate.py wraps a lone string as one item ([pred]); it does not look for "Answer:" in it.
        return value if _scitat_items(path, f"{uid} ({key})", value) else [value]
    if "answer" in record:
        if not isinstance(record["answer"], str):
            raise PredictionFileError(f"{path}: id {uid}: 'answer' must be text (SciTaT splits it on blank lines)")
        return record["answer"].split("\n\n")
    key = "response" if "response" in record and "output" not in record else "output"
    if key in record:
        value = record[key]
        if isinstance(value, list) and all(isinstance(line, str) for line in value):
            value = "\n".join(value)
        if not isinstance(value, str):
            raise PredictionFileError(f"{path}: id {uid}: '{key}' must be the model's text (or a list of lines)")
        return value
    raise PredictionFileError(f"{path}: id {uid}: needs one of {', '.join(SCITAT_PREDICTION_KEYS)}")


def load_scitat_predictions(path: Path, gold_ids: list[str] | None = None) -> list[tuple[str, list[Any] | str]]:
    """(id, items or model text) pairs in file order, duplicates kept, from either layout:

    - ours: `{id: [answer items]}` or `{id: "model text"}`;
    - SciTaT's: `[{id, pred | predict | answer | response | output}]` — `pred`/`predict` are the items, `answer`
      is text split on blank lines, `response`/`output` the model's text. As evaluate.py, records without `id`
      take the gold file's ids by position (`gold_ids`).
    """
    data = read_json(path)
    if isinstance(data, dict):
        for uid, value in data.items():
            _scitat_items(path, uid, value)
        return [(str(uid), value) for uid, value in data.items()]
    if not isinstance(data, list):
        raise PredictionFileError(
            f"{path}: expected an object {{id: [items] or text}} or a list of {{id, pred}} records, "
            f"got {type(data).__name__}"
        )
    entries: list[tuple[str, list[Any] | str]] = []
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise PredictionFileError(f"{path}: record {index}: expected an object, got {type(record).__name__}")
        if "id" in record:
            uid = str(record["id"])
        elif gold_ids is not None and index < len(gold_ids):
            uid = gold_ids[index]
        else:
            raise PredictionFileError(f"{path}: record {index} has no 'id' (and no gold question at that position)")
        entries.append((uid, _scitat_record_prediction(path, uid, record)))
    return entries

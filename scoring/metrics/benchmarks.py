"""One scorer per benchmark (TAT-QA, TAT-DQA, FinQA, SciTaT), chosen once by its format (`scorer_of`) and used by
both doors: a gold and a prediction file (`score_file`, the `score_predictions` command and the upload page) and a
run's prediction of one item (`item_native`, called by scoring/runs/results.py:item_metrics). Pure: plain data in,
plain data out; no Django. A scorer also reads its benchmark's prediction file as a run's predictions (an upload)
and names its figures for a person (`summary_lines`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curation.toolkit.numbers import fixed
from scoring.metrics import finqa, scitat, tatqa
from scoring.metrics.files import (
    PredictionFileError,
    ScoredFile,
    load_finqa_predictions,
    load_gold_records,
    load_scitat_predictions,
    load_tatqa_gold,
    load_tatqa_predictions,
)


@dataclass(frozen=True)
class FileOptions:
    """How a file is scored: the official script's or the fixed reading, the TAT-QA scale, FinQA's tolerance, and
    the BERTScore model of SciTaT's free-form answers."""

    mode: str = "official"
    scale_mode: tatqa.ScaleMode = "predicted"
    numeric_tolerance: bool = False
    bertscorer: scitat.TextScorer | None = None


@dataclass(frozen=True)
class ItemPrediction:
    """A run's prediction of one item: its answer items (non-empty), scale, program tokens, and the scale mode."""

    answer: list[str]
    scale: str
    program_tokens: Sequence[str] | None
    scale_mode: tatqa.ScaleMode


def answer_items(value: Any) -> list[str]:
    """A predicted answer as answer items: a list item by item, one value as one item, nothing as none."""
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


class Scorer:
    """A benchmark's scoring: its format, its name, its native metrics (key, label) for a run's headline, and
    whether its free-form answers are scored with BERTScore."""

    format: str = ""
    benchmark: str = ""
    native_metrics: tuple[tuple[str, str], ...] = ()
    uses_bertscore = False

    def predictions_read(self, path: Path, *, extraction: str) -> dict[str, dict[str, Any]]:
        """A prediction file of this benchmark as a run's predictions: uid → {answer: [items], scale,
        program_tokens?}; model text is read with `extraction` (default, or official: the benchmark's scripts)."""
        raise NotImplementedError

    def summary_labels(self, summary: Mapping[str, Any]) -> dict[str, str]:
        """The figures of a file's summary (key → label) as the official script names them."""
        return {"em": "Exact-match accuracy", "f1": "F1 score", "scale_accuracy": "Scale score"}

    def score_file(self, gold_path: Path, prediction_path: Path, options: FileOptions) -> ScoredFile:
        """Score one prediction file against one gold file of this benchmark."""
        raise NotImplementedError

    def item_native(self, item: Mapping[str, Any], prediction: ItemPrediction) -> dict[str, Any]:
        """The benchmark's own figures of one prediction of one item (its answer items, non-empty)."""
        raise NotImplementedError


class TatQA(Scorer):
    """TAT-QA and TAT-DQA: EM and F1 with the scale (tatqa_eval.py)."""

    def __init__(self, format: str, benchmark: str) -> None:
        self.format, self.benchmark = format, benchmark
        self.native_metrics = (
            ("tatqa_em", f"{benchmark} EM (with scale)"),
            ("tatqa_f1", f"{benchmark} F1 (with scale)"),
        )

    def score_file(self, gold_path: Path, prediction_path: Path, options: FileOptions) -> ScoredFile:
        gold = load_tatqa_gold(gold_path)
        predictions = load_tatqa_predictions(prediction_path)
        try:
            report = tatqa.score_dataset(
                gold,
                predictions,
                mode=options.mode,  # type: ignore[arg-type]
                scale_mode=options.scale_mode,
                numeric_tolerance=options.numeric_tolerance,
            )
        except ValueError as error:
            raise PredictionFileError(f"{prediction_path}: {error}") from error
        notes = []
        null_scales = sorted(uid for uid, (_, scale) in predictions.items() if scale is None)
        odd = sorted(uid for uid, (answer, _) in predictions.items() if isinstance(answer, dict))
        if odd:
            notes.append(
                f"answers that are JSON objects ({len(odd)}, e.g. {odd[0]}): read as their text, as tatqa_eval.py does"
            )
        if null_scales and options.mode == "official":
            notes.append(
                f"predictions with a null scale ({len(null_scales)}, e.g. {null_scales[0]}): the official "
                "tatqa_eval.py stops on a number with a null scale; they were scored as having no scale."
            )
        summary = {"format": self.format, **report.summary(), "notes": notes}
        fields = ("uid", "em", "f1", "is_scale_correct", "answer_type", "answer_from", "is_non_finite")
        details = [{name: getattr(score, name) for name in fields} for score in report.questions]
        return ScoredFile(summary, details, report.unknown_uids)

    def predictions_read(self, path: Path, *, extraction: str) -> dict[str, dict[str, Any]]:
        loaded = load_tatqa_predictions(path)
        return {uid: {"answer": answer_items(answer), "scale": scale or ""} for uid, (answer, scale) in loaded.items()}

    def item_native(self, item: Mapping[str, Any], prediction: ItemPrediction) -> dict[str, Any]:
        answer, scale = prediction.answer or None, prediction.scale or ""
        native = item.get("native") or {}
        question = dict(native)
        if not ("answer" in native and "answer_type" in native):
            question = {
                "uid": item.get("uid"),
                "answer": item.get("answer"),
                "answer_type": item.get("answer_type") or "span",
                "answer_from": item.get("answer_source", ""),
                "scale": item.get("scale", ""),
            }
        try:
            tat = tatqa.score_question(question, answer, scale, mode="official", scale_mode=prediction.scale_mode)
        except ValueError:
            tat = tatqa.score_question(question, answer, scale, mode="fixed", scale_mode=prediction.scale_mode)
        return {"tatqa_em": tat.em, "tatqa_f1": tat.f1, "scale_correct": tat.is_scale_correct}


class FinQA(Scorer):
    """FinQA: execution accuracy of a program (evaluate.py), or of a numeric answer."""

    format = "finqa"
    benchmark = "FinQA"
    native_metrics = (("finqa_execution", "FinQA execution accuracy"),)

    def score_file(self, gold_path: Path, prediction_path: Path, options: FileOptions) -> ScoredFile:
        if options.mode not in finqa.MODES:
            raise PredictionFileError(f"FinQA scoring modes are {' and '.join(finqa.MODES)}, not {options.mode!r}")
        gold = load_gold_records(gold_path, finqa.gold_fields)
        programs, answers = load_finqa_predictions(prediction_path)
        report = finqa.score_dataset(gold, programs, numeric_answers=answers, mode=options.mode)  # type: ignore[arg-type]
        notes = []
        headline: float | None = report.headline
        if not programs and answers:
            headline = report.numeric_accuracy
            notes.append(
                "FinQA's evaluate.py scores programs only: this file holds numeric answers, so the headline is the "
                "numeric-answer accuracy (not an official figure)."
            )
        if report.official_failure:
            notes.append(report.official_failure)
        summary = {"format": self.format, "em": headline, "f1": None, **report.summary(), "notes": notes}
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

    def predictions_read(self, path: Path, *, extraction: str) -> dict[str, dict[str, Any]]:
        programs, answers = load_finqa_predictions(path)
        read: dict[str, dict[str, Any]] = {
            uid: {"answer": answer_items(value), "scale": ""} for uid, value in answers.items()
        }
        for uid, tokens in programs:
            read[uid] = {"answer": [], "scale": "", "program_tokens": list(tokens)}
        return read

    def summary_labels(self, summary: Mapping[str, Any]) -> dict[str, str]:
        # FinQA's official accuracies divide by the predictions, the `over gold` ones by the gold questions.
        count, predictions = summary.get("count"), summary.get("prediction_count")
        return {
            "execution_accuracy": f"Execution accuracy (official: over {predictions} predictions)",
            "program_accuracy": f"Program accuracy (official: over {predictions} predictions)",
            "execution_accuracy_over_known": f"Execution accuracy (ours, not official: over the {predictions} "
            "predictions whose id is in the gold)",
            "program_accuracy_over_known": f"Program accuracy (ours, not official: over the {predictions} "
            "predictions whose id is in the gold)",
            "execution_accuracy_over_gold": f"Execution accuracy over {count} gold questions (missing = wrong)",
            "program_accuracy_over_gold": f"Program accuracy over {count} gold questions (missing = wrong)",
            "numeric_accuracy": "Numeric-answer accuracy (not official)",
        }

    def item_native(self, item: Mapping[str, Any], prediction: ItemPrediction) -> dict[str, Any]:
        answer, tokens = prediction.answer, prediction.program_tokens
        if tokens is not None and item.get("native"):
            return {"finqa_execution": float(finqa.score_question(item["native"], tokens).exe_correct)}
        native = item.get("native") or {}
        qa = native.get("qa", native)
        gold_value = next((qa[key] for key in ("exe_ans", "answer") if key in qa and qa[key] not in (None, "")), None)
        if gold_value is None:
            gold_value = next(iter(item.get("answer") or []), None)
        if gold_value is None:
            return {}
        return {"finqa_execution": float(bool(answer) and finqa.numeric_answer_correct(answer[0], gold_value))}


class SciTaT(Scorer):
    """SciTaT: EM on short-form answers, F1 and BERTScore on free-form ones (evaluate.py)."""

    format = "scitat"
    benchmark = "SciTaT"
    native_metrics = (
        ("scitat_em", "SciTaT EM (short-form, official)"),
        ("scitat_f1", "SciTaT F1 (free-form, official)"),
        ("bertscore", "SciTaT BERTScore (free-form)"),
    )
    uses_bertscore = True

    def score_file(self, gold_path: Path, prediction_path: Path, options: FileOptions) -> ScoredFile:
        if options.mode not in scitat.MODES:
            raise PredictionFileError(f"SciTaT scoring modes are {' and '.join(scitat.MODES)}, not {options.mode!r}")
        gold = load_gold_records(gold_path, lambda record: record["answer"])  # a list of items or a string
        predictions = load_scitat_predictions(prediction_path, [str(record["id"]) for record in gold])
        try:
            report = scitat.score_dataset(gold, predictions, bertscorer=options.bertscorer, mode=options.mode)  # type: ignore[arg-type]
        except ValueError as error:
            raise PredictionFileError(f"{prediction_path}: {error}") from error
        summary = {"format": self.format, **report.summary()}
        fields = ("uid", "em", "f1", "short_form", "bertscore")
        details = [{name: getattr(score, name) for name in fields} for score in report.questions]
        return ScoredFile(summary, details, report.unknown_uids)

    def predictions_read(self, path: Path, *, extraction: str) -> dict[str, dict[str, Any]]:
        mode = "official" if extraction == "official" else "fixed"
        return {
            uid: {"answer": [str(item) for item in scitat.prediction_items(value, mode)], "scale": ""}
            for uid, value in load_scitat_predictions(path)
        }

    def summary_labels(self, summary: Mapping[str, Any]) -> dict[str, str]:
        return {
            "em": "SciTaT EM (short-form questions)",
            "f1": "SciTaT F1 (free-form questions)",
            "bertscore": "SciTaT BERTScore F1 (free-form questions)",
        }

    def item_native(self, item: Mapping[str, Any], prediction: ItemPrediction) -> dict[str, Any]:
        # SciTaT's evaluate.py on this one prediction (a run has a prediction for every question, so its
        # denominators are the release's); a question the official script cannot score is counted apart.
        native = item.get("native") or {}
        record = {
            "id": item.get("uid"),
            "answer": list(item.get("answer") or []),
            "answer_type": item.get("answer_type"),
        }
        if item.get("source_format") == "scitat" and "answer" in native:
            record = {"id": item.get("uid"), "answer": native["answer"], "answer_type": native.get("answer_type", "")}
        try:
            official = scitat.score_question_official(record, prediction.answer)
        except ValueError:
            return {"scitat_unscorable": True}
        return {"scitat_em": official.em, "scitat_f1": official.f1}


SCORERS: dict[str, Scorer] = {
    scorer.format: scorer for scorer in (TatQA("tatqa", "TAT-QA"), TatQA("tatdqa", "TAT-DQA"), FinQA(), SciTaT())
}
FORMATS: tuple[str, ...] = tuple(SCORERS)


def scorer_of(benchmark: str) -> Scorer:
    """The scorer of `benchmark` (a format name); PredictionFileError for another name."""
    if benchmark not in SCORERS:
        raise PredictionFileError(f"unknown format {benchmark!r}; expected one of {', '.join(FORMATS)}")
    return SCORERS[benchmark]


def score_files(benchmark: str, gold_path: Path, prediction_path: Path, **options: Any) -> ScoredFile:
    """Score one prediction file against one gold file of `benchmark` (the options of `FileOptions`)."""
    return scorer_of(benchmark).score_file(gold_path, prediction_path, FileOptions(**options))


def summary_lines(summary: Mapping[str, Any]) -> list[str]:
    """Human-readable lines in the official scripts' style (percentages with 2 decimals), each figure named for what
    it is by its benchmark's scorer."""
    lines = []
    for key, label in scorer_of(summary.get("format", "")).summary_labels(summary).items():
        value = summary.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            lines.append(f"{label} {fixed(value, 2, scale=100)}")
    counts = ("mode", "scale_mode", "count", "prediction_count", "short_form_count", "free_form_count")
    lines.extend(f"{key}: {summary[key]}" for key in counts if key in summary)
    uids = ("duplicate_uids", "missing_uids", "non_finite_uids")
    lines.extend(f"{key}: {len(summary[key])} ({uids_listed(summary[key])})" for key in uids if summary.get(key))
    if info := summary.get("bertscore_info"):
        lines.append(f"bertscore: {info['metric']} (model {info['model']}, layer {info['layer']})")
    lines.extend(f"note: {note}" for note in summary.get("notes") or [])
    return lines


def uids_listed(uids: Sequence[str], shown: int = 10) -> str:
    """The first `shown` uids, then how many more: "a, b, c and 7 more"."""
    return ", ".join(uids[:shown]) + (f" and {len(uids) - shown} more" if len(uids) > shown else "")

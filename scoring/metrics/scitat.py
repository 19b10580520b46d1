"""SciTaT scoring: EM over short-form questions, F1 and BERTScore over free-form ones (zhxlia/SciTaT evaluate.py).

Two named modes. ``official`` reproduces SciTaT's `baseline/evaluate.py` (commit 8a488ee) question by question,
quirks included: the gold answer goes through TAT-QA's `extract_gold_answers` with the record's `answer_type`
(so an `arithmetic` gold list becomes the one string `str(list)`), the prediction through `TaTQAEmAndF1.__call__`
(which adds the ratio alternative, 0.853 ↔ 85.3%), only questions that have a prediction are scored (the others
are left out of both denominators), an `answer` text is split on blank lines, and the short-form test runs on the
raw gold answer. ``fixed`` is ours: every gold question counts (missing = 0), the gold list is scored item by
item, and text predictions are the part after `Answer:`. README › Scoring lists the differences.

A question is short-form when every gold answer item has at most 5 tokens after splitting on a single space.
BERTScore compares items joined with ". " on both sides, as the SciTaT script does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Protocol

from curation.toolkit.answer_form import is_short_form
from curation.toolkit.extraction import answer_segment_items, official_answer_items
from scoring.metrics import tatqa

Mode = Literal["official", "fixed"]
MODES: tuple[str, ...] = ("official", "fixed")


class TextScorer(Protocol):
    """Anything that scores aligned candidate and reference strings (e.g. a BERTScore scorer)."""

    def f1_many(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """Return one F1 per pair."""
        ...

    def info(self) -> dict[str, Any]:
        """Describe the model that produced the figures."""
        ...


def prediction_items(prediction: Any, mode: Mode = "fixed") -> list[Any]:
    """Items of a prediction given as a list of items or as raw model text: the scripts' answer items
    (`answer_segment_items`), or in official mode SciTaT's CoT `process_output_to_answer`
    (`curation.toolkit.extraction`); an empty answer is one empty item, as the scripts' split gives."""
    if isinstance(prediction, str):
        read = official_answer_items if mode == "official" else answer_segment_items
        return read(prediction) or [""]
    if isinstance(prediction, list):
        # The official script keeps numbers as numbers (they sort numerically); ours compares text.
        return list(prediction) if mode == "official" else [str(item) for item in prediction]
    raise ValueError(f"a SciTaT prediction must be a list of items or a string, got {type(prediction).__name__}")


@dataclass
class ScitatQuestionScore:
    """Figures for one SciTaT question: EM for short-form, F1 and BERTScore for free-form."""

    uid: str
    short_form: bool
    em: float | None
    f1: float | None
    bertscore: float | None = None


@dataclass
class ScitatReport:
    """Means over the short-form (EM) and free-form (F1, BERTScore) questions that were scored."""

    count: int
    short_form_count: int
    free_form_count: int
    em: float | None
    f1: float | None
    bertscore: float | None
    bertscore_info: dict[str, Any] | None
    mode: str = "official"
    questions: list[ScitatQuestionScore] = field(default_factory=list)
    unknown_uids: list[str] = field(default_factory=list)
    # official mode: gold questions without a prediction (left out of every figure) and ids given twice (both scored)
    missing_uids: list[str] = field(default_factory=list)
    duplicate_uids: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Aggregate figures without per-question detail."""
        return {item.name: getattr(self, item.name) for item in fields(self) if item.name != "questions"}


def _em_f1(items: Sequence[str], gold_items: Sequence[str], mode: tatqa.Mode) -> tuple[float, float]:
    return tatqa.string_em_f1(tatqa.answer_string(items, "", mode), tatqa.answer_string(gold_items, "", mode), mode)


def _form_score(uid: str, short_form: bool, em: float, f1: float) -> ScitatQuestionScore:
    """EM counts for a short-form question, F1 for a free-form one."""
    return ScitatQuestionScore(uid, short_form, em, None) if short_form else ScitatQuestionScore(uid, False, None, f1)


def score_question(
    uid: str, gold_items: Sequence[str], prediction: Any, *, mode: tatqa.Mode = "official"
) -> ScitatQuestionScore:
    """Fixed mode, one question: EM (short-form) or F1 (free-form) of the items against the gold items, joined as
    TAT-QA joins a multi-span answer (`mode` picks the TAT-QA normalisation rules); BERTScore is filled in later."""
    gold_items = [str(item) for item in gold_items]
    short_form = is_short_form(gold_items)
    items = prediction_items(prediction) if prediction is not None else []
    em, f1 = _em_f1(items, gold_items, mode) if items else (0.0, 0.0)
    return _form_score(uid, short_form, em, f1)


def score_question_official(record: Mapping[str, Any], prediction: Any) -> ScitatQuestionScore:
    """Official mode, one question: `TaTQAEmAndF1.__call__(gold, pred, "")` as SciTaT's evaluate.py calls it, the
    ground truth being the record's answer and answer type, no scale."""
    uid = str(record.get("id", ""))
    items = prediction_items(prediction, "official") if prediction is not None else []
    gold = {"uid": uid, "answer": record["answer"], "answer_type": record.get("answer_type") or "", "scale": ""}
    try:
        scored = tatqa.score_question(gold, items, "", mode="official")
        if not isinstance(record["answer"], list | str):
            raise TypeError(f"a {type(record['answer']).__name__} answer is not iterable")
    except (TypeError, ValueError) as error:
        raise ValueError(f"id {uid}: SciTaT's evaluate.py cannot score this question ({error})") from error
    # evaluate.py's short-form test runs on the raw gold answer (a string's elements are its characters, so a string
    # answer is always short-form).
    return _form_score(uid, is_short_form(record["answer"]), scored.em, scored.f1)


def exact_match(predicted_items: Sequence[Any], gold_items: Sequence[Any], mode: tatqa.Mode = "fixed") -> float:
    """SciTaT/TAT-QA EM (1.0 or 0.0) of a list of answer items against the gold items; no items scores 0.

    Defaults to the "fixed" mode because people type items in any order and case: the official mode sorts
    case-sensitively (so ["bert", "ALBERT"] and ["BERT", "albert"] join in different orders and differ) and
    raises on lists mixing numbers and strings; "fixed" sorts case-insensitively and normalises the same way.
    """
    items = [str(item) for item in predicted_items if str(item).strip()]
    if not items:
        return 0.0
    return _em_f1(items, [str(item) for item in gold_items], mode)[0]


def score_dataset(
    gold_records: Iterable[Mapping[str, Any]],
    predictions: Mapping[str, Any] | Sequence[tuple[str, Any]],
    *,
    bertscorer: TextScorer | None = None,
    mode: Mode = "official",
) -> ScitatReport:
    """Score predictions (`{id: items or text}`, or `(id, items or text)` pairs in file order) against SciTaT gold
    records (`id`, `answer`, `answer_type`). Official: one score per prediction of a known id, in file order;
    fixed: one per gold question, the last prediction of an id winning."""
    if mode not in MODES:
        raise ValueError(f"unknown SciTaT mode {mode!r}; expected one of {', '.join(MODES)}")
    records = {str(record["id"]): record for record in gold_records}
    pairs = predictions.items() if isinstance(predictions, Mapping) else predictions
    entries = [(str(uid), value) for uid, value in pairs]
    given = [uid for uid, _ in entries]
    pairs: list[tuple[Mapping[str, Any], Any]]
    if mode == "official":
        pairs = [(records[uid], value) for uid, value in entries if uid in records]
    else:
        latest = dict(entries)
        pairs = [(record, latest.get(uid)) for uid, record in records.items()]
    scores: list[ScitatQuestionScore] = []
    free_pairs: list[tuple[ScitatQuestionScore, str, str]] = []
    for record, prediction in pairs:
        answer = record["answer"]  # a list of items or one string
        if mode == "official":
            score = score_question_official(record, prediction)
            # evaluate.py's BERTScore pair: `". ".join(pred)`, `". ".join(answer)` (a string answer joins characters).
            items = prediction_items(prediction, "official") if prediction is not None else []
            gold_items = [str(element) for element in answer]
        else:
            gold_items = [str(item) for item in answer] if isinstance(answer, list) else [str(answer)]
            score = score_question(str(record["id"]), gold_items, prediction, mode="official")
            items = prediction_items(prediction) if prediction is not None else []
        texts = (". ".join(str(item) for item in items), ". ".join(gold_items))
        if not score.short_form:
            free_pairs.append((score, *texts))
        scores.append(score)
    if bertscorer is not None and free_pairs:
        values = bertscorer.f1_many([pair[1] for pair in free_pairs], [pair[2] for pair in free_pairs])
        for (score, _, _), value in zip(free_pairs, values, strict=True):
            score.bertscore = value
    short = [score for score in scores if score.short_form]
    free = [score for score in scores if not score.short_form]
    given_set = set(given)
    return ScitatReport(
        count=len(scores),
        short_form_count=len(short),
        free_form_count=len(free),
        # No question of a form, no figure of it (None, not 0.0): EM is over short-form, F1/BERTScore over free-form.
        em=sum(score.em or 0.0 for score in short) / len(short) if short else None,
        f1=sum(score.f1 or 0.0 for score in free) / len(free) if free else None,
        bertscore=sum(s.bertscore or 0.0 for s in free) / len(free) if free and bertscorer is not None else None,
        bertscore_info=bertscorer.info() if bertscorer is not None else None,
        mode=mode,
        questions=scores,
        unknown_uids=sorted(uid for uid in given_set if uid not in records),
        missing_uids=[uid for uid in records if uid not in given_set] if mode == "official" else [],
        duplicate_uids=sorted(uid for uid, times in Counter(given).items() if times > 1),
    )

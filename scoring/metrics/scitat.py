"""SciTaT scoring: EM over short-form questions, F1 and BERTScore over free-form ones (zhxlia/SciTaT evaluate.py).

A question is short-form when every gold answer item has at most 5 tokens after splitting on a single space.
EM and F1 are the TAT-QA figures with empty scales. Predictions are the text after `Answer:`, split into items on
blank lines; BERTScore compares items joined with ". " on both sides, as the SciTaT script does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from curation.toolkit.answer_form import is_short_form
from scoring.metrics import tatqa

ANSWER_MARKERS = ("\nAnswer: \n", "\nAnswer:\n", "Answer: ", "Answer:")


class TextScorer(Protocol):
    """Anything that scores aligned candidate and reference strings (e.g. a BERTScore scorer)."""

    def f1_many(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """Return one F1 per pair."""
        ...

    def info(self) -> dict[str, Any]:
        """Describe the model that produced the figures."""
        ...


def extract_answer_items(text: str) -> list[str]:
    """The text after the first `Answer:` marker (up to any next one), code fences removed, split on blank lines."""
    for marker in ANSWER_MARKERS:
        if marker in text:
            text = text.split(marker)[1].strip()
            break
    for fence in ("```json\n", "```csv\n", "```\n", "```"):
        text = text.replace(fence, " ")
    return text.strip().split("\n\n")


def prediction_items(prediction: Any) -> list[str]:
    """Items of a prediction given as a list of items or as raw model text."""
    if isinstance(prediction, str):
        return extract_answer_items(prediction)
    if isinstance(prediction, list):
        return [str(item) for item in prediction]
    raise ValueError(f"a SciTaT prediction must be a list of items or a string, got {type(prediction).__name__}")


@dataclass
class ScitatQuestionScore:
    """Figures for one SciTaT question: EM for short-form, F1 and BERTScore for free-form."""

    uid: str
    short_form: bool
    em: float | None
    f1: float | None
    bertscore: float | None = None
    has_prediction: bool = False
    attributes: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return asdict(self)


@dataclass
class ScitatReport:
    """Means over the short-form (EM) and free-form (F1, BERTScore) questions."""

    count: int
    short_form_count: int
    free_form_count: int
    em: float
    f1: float
    bertscore: float | None
    bertscore_info: dict[str, Any] | None
    questions: list[ScitatQuestionScore] = field(default_factory=list)
    unknown_uids: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Aggregate figures without per-question detail."""
        data = asdict(self)
        data.pop("questions")
        return data


def score_question(
    uid: str, gold_items: Sequence[str], prediction: Any, *, mode: tatqa.Mode = "official"
) -> ScitatQuestionScore:
    """EM (short-form) or F1 (free-form) of one prediction; BERTScore is filled in by `score_dataset`."""
    gold_items = [str(item) for item in gold_items]
    short_form = is_short_form(gold_items)
    items = prediction_items(prediction) if prediction is not None else []
    if items:
        em, f1 = tatqa.string_em_f1(
            tatqa.answer_string(items, "", mode), tatqa.answer_string(gold_items, "", mode), mode
        )
    else:
        em, f1 = 0.0, 0.0
    return ScitatQuestionScore(
        uid=uid,
        short_form=short_form,
        em=em if short_form else None,
        f1=None if short_form else f1,
        has_prediction=bool(items),
    )


def exact_match(predicted_items: Sequence[Any], gold_items: Sequence[Any], mode: tatqa.Mode = "fixed") -> float:
    """SciTaT/TAT-QA EM (1.0 or 0.0) of a list of answer items against the gold items; no items scores 0.

    Defaults to the "fixed" mode because people type items in any order and case: the official mode sorts
    case-sensitively (so ["bert", "ALBERT"] and ["BERT", "albert"] join in different orders and differ) and
    raises on lists mixing numbers and strings; "fixed" sorts case-insensitively and normalises the same way.
    """
    items = [str(item) for item in predicted_items if str(item).strip()]
    if not items:
        return 0.0
    gold = [str(item) for item in gold_items]
    em, _ = tatqa.string_em_f1(tatqa.answer_string(items, "", mode), tatqa.answer_string(gold, "", mode), mode)
    return em


def gold_items_of(record: Mapping[str, Any]) -> list[str]:
    """Gold answer items of a SciTaT record (`answer` is a list of items or one string)."""
    answer = record["answer"]
    return [str(item) for item in answer] if isinstance(answer, list) else [str(answer)]


def score_dataset(
    gold_records: Iterable[Mapping[str, Any]],
    predictions: Mapping[str, Any],
    *,
    bertscorer: TextScorer | None = None,
    mode: tatqa.Mode = "official",
    attribute_names: Sequence[str] = ("question_type", "answer_type", "answer_source"),
) -> ScitatReport:
    """Score `{id: [items]}` or `{id: "text"}` predictions against SciTaT gold records (`id`, `answer`)."""
    scores: list[ScitatQuestionScore] = []
    seen: set[str] = set()
    free_pairs: list[tuple[ScitatQuestionScore, str, str]] = []
    for record in gold_records:
        uid = str(record["id"])
        seen.add(uid)
        gold_items = gold_items_of(record)
        prediction = predictions.get(uid)
        score = score_question(uid, gold_items, prediction, mode=mode)
        score.attributes = {name: record[name] for name in attribute_names if name in record}
        if not score.short_form:
            items = prediction_items(prediction) if prediction is not None else []
            free_pairs.append((score, ". ".join(items), ". ".join(gold_items)))
        scores.append(score)
    if bertscorer is not None and free_pairs:
        values = bertscorer.f1_many([pair[1] for pair in free_pairs], [pair[2] for pair in free_pairs])
        for (score, _, _), value in zip(free_pairs, values, strict=True):
            score.bertscore = value
    short = [score for score in scores if score.short_form]
    free = [score for score in scores if not score.short_form]
    return ScitatReport(
        count=len(scores),
        short_form_count=len(short),
        free_form_count=len(free),
        em=sum(score.em or 0.0 for score in short) / len(short) if short else 0.0,
        f1=sum(score.f1 or 0.0 for score in free) / len(free) if free else 0.0,
        bertscore=(sum(score.bertscore or 0.0 for score in free) / len(free) if free else 0.0)
        if bertscorer is not None
        else None,
        bertscore_info=bertscorer.info() if bertscorer is not None else None,
        questions=scores,
        unknown_uids=sorted(uid for uid in predictions if uid not in seen),
    )

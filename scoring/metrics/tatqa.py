"""TAT-QA / TAT-DQA exact match and numeracy-focused F1, reproducing the official tatqa_eval.py question by question.

Behaviour follows NExTplusplus/TAT-QA `tatqa_metric.py` + `tatqa_utils.py` (MIT, Copyright (c) 2021 Fengbin Zhu)
in mode ``official``; ``tatllm`` follows fengbinzhu/TAT-LLM's copy of those files; ``fixed`` is ours.
Differences between modes live in :class:`ModeRules` so that each one is named and documented.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

Mode = Literal["official", "fixed", "tatllm"]
ScaleMode = Literal["predicted", "ignore"]
MODES: tuple[str, ...] = ("official", "fixed", "tatllm")
SCALE_MODES: tuple[str, ...] = ("predicted", "ignore")

EXCLUDE_IN_NUMBER = "'\"\\$€£¥%(),[]"
PUNCTUATION = set(string.punctuation)
NUMBER_PATTERN = re.compile(r"([+-]?\d+(\.\d+)?)|([+-]?\.\d+)")
SCALE_WORD_PATTERN = re.compile(r"([\d.]+\s?[a-zA-Z]+)")
PERCENT_PATTERN = re.compile(r"([\d.\s]+%)")
ARTICLES_PATTERN = re.compile(r"\b(a|an|the)\b", re.UNICODE)


@dataclass(frozen=True)
class ModeRules:
    """The knobs on which official, fixed and TAT-LLM scoring differ; the defaults are the official script's."""

    # official: `(\([\d.\s]+\))` — "(1,234.5)" and "(48.18%)" stay positive.
    negative_pattern: re.Pattern[str] = re.compile(r"(\([\d.\s]+\))")
    # official: plain `sorted(answers)` (case-sensitive; a list mixing numbers and strings raises TypeError).
    is_sort_case_insensitive: bool = False
    # official: `if not prediction` — an int 0 (or 0.0, "", []) scores 0/0 and never counts for scale.
    is_zero_an_answer: bool = False
    # official: a lone numeric prediction with no scale is also scored unscaled (0.2212 vs 22.12 percent).
    has_ratio_alternative: bool = True
    # TAT-LLM lower-cases every item before formatting it.
    is_item_lowercased: bool = False
    # TAT-LLM counts a correct scale even when the prediction is missing or empty.
    is_scale_counted_without_answer: bool = False
    # TAT-LLM: a null predicted scale makes `scale_to_num(None)` raise inside `get_answer_str` on the first number
    # without `%`, which its `except` turns into the empty answer string (EM 0, F1 0).
    is_null_scale_fatal_to_numbers: bool = False


RULES: dict[str, ModeRules] = {
    "official": ModeRules(),
    "fixed": ModeRules(
        negative_pattern=re.compile(r"(\([\d.,\s%]+\))"), is_sort_case_insensitive=True, is_zero_an_answer=True
    ),
    "tatllm": ModeRules(
        negative_pattern=re.compile(r"(\([\d.\s%]+\))"),
        is_sort_case_insensitive=True,
        is_zero_an_answer=True,
        has_ratio_alternative=False,
        is_item_lowercased=True,
        is_scale_counted_without_answer=True,
        is_null_scale_fatal_to_numbers=True,
    ),
}


# In the official code's order: the first word a label contains names its factor.
SCALE_FACTORS = (("hundred", 100), ("thousand", 1000), ("million", 1000000), ("billion", 1000000000), ("percent", 0.01))


def scale_to_number(scale: str | None) -> float:
    """Return the factor of a scale label, matched by substring as the official code does (none → 1)."""
    label = (scale or "").lower()
    return next((factor for word, factor in SCALE_FACTORS if word in label), 1)


def _clean_number(text: Any) -> str:
    return "".join(ch for ch in str(text) if ch not in EXCLUDE_IN_NUMBER)


def is_number(text: str) -> bool:
    """Official `is_number`: the first cleaned word parses as a float; a second word may only be a scale word."""
    words = " ".join(_clean_number(word) for word in text.split()).split()
    if not words:
        return False
    try:
        value = float(words[0])
    except ValueError:
        return False
    if math.isnan(value):
        return False
    return not (len(words) >= 2 and scale_to_number(words[1]) == 1)


def _first_number(text: str) -> int | float | None:
    groups = NUMBER_PATTERN.findall(_clean_number(text))
    if not groups or groups[0][0] == "":
        return None
    number = groups[0][0]
    return float(number) if "." in number else int(number)


def _word_scale(text: str) -> float:
    match = SCALE_WORD_PATTERN.search(text)
    return scale_to_number(match.group(0).lower()) if match else 1


def to_number(text: str, mode: Mode = "official") -> int | float | None:
    """Official `to_number`: first number × scale word × sign of a parenthesised group × 0.01 for `%`, 4 decimals."""
    number = _first_number(text)
    if number is None:
        return None
    negative = -1 if RULES[mode].negative_pattern.findall(text.strip()) else 1
    percent = 0.01 if PERCENT_PATTERN.findall(text.strip()) else 1
    return round(number * _word_scale(text) * negative * percent, 4)


def _normalize_token(token: str, mode: Mode) -> str:
    token = token.lower()
    if not is_number(token):
        token = "".join(ch for ch in token if ch not in PUNCTUATION)
    # Checked again after stripping, as the official normalize_number does ("4." → "4" → number).
    if is_number(token):
        token = str(to_number(token, mode))
    token = ARTICLES_PATTERN.sub(" ", token)
    return " ".join(token.split())


def normalize_answer(text: str, mode: Mode = "official") -> str:
    """Official `normalize_answer`: per space-split token lower, strip punctuation unless numeric, re-render numbers."""
    parts = [_normalize_token(token, mode) for token in re.split(" ", text)]
    return " ".join(part for part in parts if part.strip()).strip()


def answer_string(items: Iterable[Any], scale: str | None, mode: Mode = "official") -> str:
    """Official `get_answer_str`: sort items, render numbers with the scale, join everything into one string."""
    rules = RULES[mode]
    items = list(items)
    if rules.is_sort_case_insensitive:
        ordered = sorted(items, key=lambda item: str(item).lower())
    else:
        try:
            ordered = sorted(items)
        except TypeError as error:
            raise ValueError(
                f"answer {items!r} mixes types the official scorer cannot sort (use mode 'fixed')"
            ) from error
    rendered = []
    for item in ordered:
        text = str(item).lower() if rules.is_item_lowercased else str(item)
        number = to_number(text, mode) if is_number(text) else None
        if number is not None and "%" not in text and scale is None and rules.is_null_scale_fatal_to_numbers:
            return ""
        if number is None:
            if scale:
                text = text + " " + str(scale)
        elif "%" in text:
            text = f"{number:.4f}"
        else:
            text = f"{round(number, 2) * scale_to_number(scale):.4f}"
        rendered.append(text)
    return " ".join(rendered)


def _ratio_alternative(items: list[Any], predicted_scale: str | None, mode: Mode) -> str | None:
    if len(items) > 1:
        return None
    text = str(items[0])
    if predicted_scale or "%" in text or not is_number(text):
        return None
    number = to_number(text, mode)
    return None if number is None else f"{number:.4f}"


def bag_f1(predicted: set[str], gold: set[str]) -> float:
    """Official `_compute_f1` over two token sets (an empty side counts as precision/recall 1)."""
    intersection = len(gold & predicted)
    precision = 1.0 if not predicted else intersection / len(predicted)
    recall = 1.0 if not gold else intersection / len(gold)
    if precision == 0.0 and recall == 0.0:
        return 0.0
    return (2 * precision * recall) / (precision + recall)


def string_em_f1(predicted: str, gold: str, mode: Mode = "official") -> tuple[float, float]:
    """Official `get_metrics` for one predicted string and one gold string: EM and F1 rounded to 2 decimals."""
    predicted_normal = normalize_answer(predicted, mode)
    gold_normal = normalize_answer(gold, mode)
    exact_match = 1.0 if predicted_normal == gold_normal else 0.0
    f1 = round(bag_f1(set(predicted_normal.split()), set(gold_normal.split())), 2)
    return exact_match, f1


def gold_answer_items(question: Mapping[str, Any]) -> list[str]:
    """Official `extract_gold_answers`: spans stay lists, arithmetic → str(answer), count → str(int(answer))."""
    answer_type = question.get("answer_type", "")
    answer = question["answer"]
    if answer_type in ("span", "multi-span"):
        if not isinstance(answer, list):
            raise ValueError(f"answer of a {answer_type} question must be a list, got {type(answer).__name__}")
        return list(answer)
    if answer_type == "count":
        return [str(int(answer))]
    return [str(answer)]


def measure_match(gold: float | None, predicted: float | None) -> bool:
    """TAT-LLM's numeric tolerance (tat_llm_eval.measure_match): equal up to ×100, /100 and a small relative gap."""
    if gold is None or predicted is None:
        return False
    if len(str(predicted)) > 20:
        return False
    gap = min(
        abs(abs(gold) - abs(predicted)),
        abs(abs(gold) - abs(predicted) * 100),
        abs(abs(gold) - abs(predicted) / 100),
    )
    if gap == 0:
        return True
    if gap < 1 and abs(gold) > 100:
        return True
    if gap < 0.1 and abs(gold) > 10:
        return True
    if gap <= 0.01:
        if abs(gold) > 1 or gap < 0.001:
            return True
        return gold != 0 and gap / abs(gold) < 0.01
    return False


@dataclass
class QuestionScore:
    """Figures for one gold question."""

    uid: str
    em: float = 0.0
    f1: float = 0.0
    is_scale_correct: bool | None = None
    answer_type: str = ""
    answer_from: str = ""
    is_non_finite: bool = False


def score_question(
    question: Mapping[str, Any],
    prediction: Any,
    predicted_scale: str | None,
    *,
    mode: Mode = "official",
    scale_mode: ScaleMode = "predicted",
    numeric_tolerance: bool = False,
) -> QuestionScore:
    """Score one TAT-QA question the way TaTQAEmAndF1.__call__ does (plus the named mode and scale options)."""
    if mode not in RULES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
    if scale_mode not in SCALE_MODES:
        raise ValueError(f"unknown scale mode {scale_mode!r}; expected one of {SCALE_MODES}")
    rules = RULES[mode]
    gold_scale = question.get("scale", "") or ""
    # A null scale in a prediction file would crash the official script; it is read as "no scale".
    raw_predicted_scale = predicted_scale
    predicted_scale = predicted_scale or ""
    answer_type = question.get("answer_type", "") or ""
    result = QuestionScore(
        uid=str(question.get("uid", "")),
        answer_type=answer_type,
        answer_from=question.get("answer_from", "") or "",
    )
    scale_matches = raw_predicted_scale is not None and predicted_scale == gold_scale
    if scale_mode == "predicted":
        result.is_scale_correct = scale_matches and rules.is_scale_counted_without_answer
    is_missing = prediction in (None, "", []) if rules.is_zero_an_answer else not prediction
    if is_missing:
        return result
    gold_items = gold_answer_items(question)
    if not gold_items:
        return result
    if scale_mode == "predicted":
        result.is_scale_correct = scale_matches
    if scale_mode == "ignore":
        gold_scale = predicted_scale = ""
    items = prediction if isinstance(prediction, list) else [prediction]
    if any(isinstance(item, float) and not math.isfinite(item) for item in items):
        # tatqa_eval.py reads NaN/Infinity (json.load) and renders them as text that matches no gold: a wrong row.
        result.is_non_finite = True
        return result
    if numeric_tolerance and answer_type == "arithmetic" and len(items) == 1:
        gold_number = to_number(gold_items[0], mode)
        predicted_text = str(items[0])
        predicted_number = to_number(predicted_text, mode) if is_number(predicted_text) else None
        if measure_match(gold_number, predicted_number):
            items = [gold_number]
    try:
        gold_string = answer_string(gold_items, gold_scale, mode)
        # Only TAT-LLM's rules look at a null scale; elsewhere it reads as "no scale".
        scale_given = (
            raw_predicted_scale
            if rules.is_null_scale_fatal_to_numbers and scale_mode == "predicted"
            else predicted_scale
        )
        candidates = [answer_string(items, scale_given, mode)]
    except ValueError as error:
        raise ValueError(f"uid {result.uid}: {error}") from error
    if rules.has_ratio_alternative:
        alternative = _ratio_alternative(items, predicted_scale, mode)
        if alternative is not None:
            candidates.append(alternative)
    result.em, result.f1 = max(string_em_f1(candidate, gold_string, mode) for candidate in candidates)
    if answer_type in ("arithmetic", "count"):
        result.f1 = result.em
    return result


@dataclass
class TatqaReport:
    """Dataset-level figures: plain per-question means, scale accuracy and answer type × source pivots."""

    mode: str
    scale_mode: str
    count: int
    em: float
    f1: float
    scale_accuracy: float | None
    pivots: dict[str, dict[str, dict[str, float]]]
    questions: list[QuestionScore] = field(default_factory=list)
    unknown_uids: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Aggregate figures without per-question detail."""
        data = {item.name: getattr(self, item.name) for item in fields(self) if item.name != "questions"}
        return {**data, "non_finite_uids": [score.uid for score in self.questions if score.is_non_finite]}


def pivot_by_type_and_source(scores: Iterable[QuestionScore]) -> dict[str, dict[str, dict[str, float]]]:
    """Mean EM and F1 (and count) for each answer type × answer source, as the official pivot tables."""
    cells: dict[str, dict[str, list[QuestionScore]]] = {}
    for score in scores:
        cells.setdefault(score.answer_type, {}).setdefault(score.answer_from, []).append(score)
    return {
        answer_type: {
            answer_from: {
                "count": len(members),
                "em": sum(member.em for member in members) / len(members),
                "f1": sum(member.f1 for member in members) / len(members),
            }
            for answer_from, members in sorted(by_source.items())
        }
        for answer_type, by_source in sorted(cells.items())
    }


def score_dataset(
    gold_documents: Iterable[Mapping[str, Any]],
    predictions: Mapping[str, Any],
    *,
    mode: Mode = "official",
    scale_mode: ScaleMode = "predicted",
    numeric_tolerance: bool = False,
) -> TatqaReport:
    """Score `{uid: [answer, scale]}` predictions against a gold file (a list of documents with `questions`), every
    gold question counted once."""
    questions = [question for document in gold_documents for question in document["questions"]]
    options = {"mode": mode, "scale_mode": scale_mode, "numeric_tolerance": numeric_tolerance}
    scores = [score_question(q, *predictions.get(q["uid"], (None, None)), **options) for q in questions]
    seen = {question["uid"] for question in questions}
    count = len(scores)
    scale_accuracy = None
    if scale_mode == "predicted":
        scale_accuracy = sum(1 for score in scores if score.is_scale_correct) / count if count else 0.0
    return TatqaReport(
        mode=mode,
        scale_mode=scale_mode,
        count=count,
        em=sum(score.em for score in scores) / count if count else 0.0,
        f1=sum(score.f1 for score in scores) / count if count else 0.0,
        scale_accuracy=scale_accuracy,
        pivots=pivot_by_type_and_source(scores),
        questions=scores,
        unknown_uids=sorted(uid for uid in predictions if uid not in seen),
    )

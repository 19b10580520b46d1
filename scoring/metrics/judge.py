"""A model judge for free-form answers: an optional figure beside BERTScore, never an official metric.

A judge endpoint grades an answer against the gold with the rubric (`scoring.methods.templates.JUDGE`, or the
project's saved "judge" template); each verdict is recorded with the judge's reasoning, the rubric's version (its
hash) and the judge's model. How far to trust it is measured against people: Cohen's kappa between its verdicts and
the labels members give free-form predictions, with a 95 % interval (Cohen's 1960 large-sample
standard error) — reported only from MIN_LABELS labelled predictions on.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from curation.endpoints.errors import EndpointError
from scoring.methods.templates import render

SCORES = {"correct": 1.0, "partially correct": 0.5, "incorrect": 0.0}
MIN_LABELS = 10
_VERDICT = re.compile(r"verdict\s*[:\-]\s*\**\s*(partially correct|partially|correct|incorrect)", re.IGNORECASE)
_REASONING = re.compile(r"reasoning\s*[:\-]\s*(.*?)(?=\n\s*\**verdict|\Z)", re.IGNORECASE | re.DOTALL)


def parse_verdict(text: str) -> dict[str, Any]:
    """The verdict and reasoning of a judge's reply; a reply without a verdict is kept whole as `unparsed`."""
    found = _VERDICT.findall(text or "")
    if not found:
        return {"verdict": "unparsed", "score": None, "reasoning": "", "raw": text or ""}
    verdict = found[-1].lower()
    verdict = "partially correct" if verdict.startswith("partially") else verdict
    reasoning = _REASONING.search(text)
    return {
        "verdict": verdict,
        "score": SCORES[verdict],
        "reasoning": (reasoning.group(1) if reasoning else "").strip(),
    }


def judge_answer(
    chat: Callable[..., Any], rubric: str, *, question: str, gold: Sequence[str], answer: Sequence[str], model: str
) -> dict[str, Any]:
    """Ask the judge about one answer; its verdict as recorded on the prediction (a failed call says why)."""
    record = {"rubric": hashlib.sha256(rubric.encode()).hexdigest()[:12], "judge": model}
    prompt = render(rubric, Question=question, Gold="\n".join(map(str, gold)), Answer="\n".join(map(str, answer)))
    try:
        result = chat([{"role": "user", "content": prompt}])
    except EndpointError as error:
        return {**record, "verdict": "failed", "score": None, "reasoning": "", "error": error.message}
    return {**record, **parse_verdict(result.text)}


def agreement(pairs: Iterable[tuple[bool, bool]]) -> dict[str, Any]:
    """Cohen's kappa of (judge says correct, person says correct) pairs, with n, raw agreement and a 95 % interval;
    below MIN_LABELS pairs, only n and a sentence saying more labels are needed."""
    pairs = list(pairs)
    n = len(pairs)
    if n < MIN_LABELS:
        return {"n": n, "kappa": None, "note": f"labelled predictions: {n}; at least {MIN_LABELS} are needed."}
    observed = sum(judge == person for judge, person in pairs) / n
    judge_yes = sum(judge for judge, _ in pairs) / n
    person_yes = sum(person for _, person in pairs) / n
    expected = judge_yes * person_yes + (1 - judge_yes) * (1 - person_yes)
    if expected == 1:  # both always say the same one thing: agreement is total, kappa undefined
        return {"n": n, "agreement": observed, "kappa": None, "note": "every label is the same: kappa is undefined"}
    kappa = (observed - expected) / (1 - expected)
    error = math.sqrt(observed * (1 - observed) / (n * (1 - expected) ** 2))
    return {
        "n": n,
        "agreement": round(observed, 4),
        "kappa": round(kappa, 4),
        "low": round(max(-1.0, kappa - 1.96 * error), 4),
        "high": round(min(1.0, kappa + 1.96 * error), 4),
        "note": "",
    }

"""SciTaT's short-form rule, written once: the importers, the workspace suggestion and the scorers all call it."""

from __future__ import annotations

from collections.abc import Sequence

SHORT_FORM_MAX_TOKENS = 5


def answer_tokens(item: object) -> list[str]:
    """SciTaT's one tokenisation of an answer item: split on a single space (evaluate.py), nothing else."""
    return str(item).split(" ")


def is_short_form(gold_items: Sequence[object]) -> bool:
    """The SciTaT short-form rule, written once: every answer item has at most 5 tokens (`answer_tokens`).

    The workspace suggestion, the dataset importers and the metrics all call this (or `answer_form`)."""
    return all(len(answer_tokens(item)) <= SHORT_FORM_MAX_TOKENS for item in gold_items)


def answer_form(items: Sequence[object]) -> str:
    """'short' or 'free' by `is_short_form`; '' when there is no non-blank item to judge."""
    judged = [item for item in items if str(item).strip()]
    if not judged:
        return ""
    return "short" if is_short_form(judged) else "free"

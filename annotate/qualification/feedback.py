"""Why an exam answer missed the gold answer, in one short sentence a person can act on (pure, no Django)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import partial

from scoring.metrics import tatqa
from scoring.metrics.scitat import exact_match

MODE: tatqa.Mode = "fixed"
SCALE_WORDS = ("hundred", "thousand", "million", "billion", "percent")
# Two figures are the same value to within a millionth (of the larger, or absolutely near zero).
_close = partial(math.isclose, rel_tol=1e-6, abs_tol=1e-6)


def normalised_item(item: str) -> str:
    """One answer item as EM compares it (numbers re-rendered, case, punctuation and articles dropped)."""
    return tatqa.normalize_answer(tatqa.answer_string([item], "", MODE), MODE)


def _number(item: str) -> float | None:
    return tatqa.to_number(item, MODE) if tatqa.is_number(item) else None


def _scale_word(item: str) -> str:
    lowered = item.lower()
    if "%" in item:
        return "%"
    return next((word for word in SCALE_WORDS if word in lowered), "")


def _bare_number(item: str) -> float | None:
    """The figure as written, without its scale word or percent sign ("5 million" and "5%" are both 5)."""
    bare = re.sub(rf"%|\b(?:{'|'.join(SCALE_WORDS)})\b", " ", item, flags=re.IGNORECASE).strip()
    return _number(bare)


def _same_figure(predicted: str, gold: str) -> bool:
    """Whether the figures as written, without scale or percent sign, agree to the coarser of their precisions."""
    mine, theirs = _bare_number(predicted), _bare_number(gold)
    if mine is None or theirs is None:
        return mine == theirs
    places = min(_decimals(predicted), _decimals(gold))
    return round(mine, places) == round(theirs, places)


def _decimals(item: str) -> int:
    digits = tatqa._clean_number(item).split()
    if not digits or "." not in digits[0]:
        return 0
    return len(digits[0].split(".", 1)[1])


def _quote(items: Sequence[str]) -> str:
    return ", ".join(f"“{item}”" for item in items)


def explain_number(predicted: str, gold: str) -> str:
    """Reason for two numeric items that differ after normalisation."""
    mine, theirs = _number(predicted), _number(gold)
    assert mine is not None and theirs is not None
    mine_scale, gold_scale = _scale_word(predicted), _scale_word(gold)
    if mine_scale != gold_scale:
        what = {"": "no scale or percent sign", "%": "a percent sign"}
        yours = what.get(mine_scale, f"the scale word “{mine_scale}”")
        wanted = what.get(gold_scale, f"the scale word “{gold_scale}”")
        if not _same_figure(predicted, gold) and not _close(mine, theirs):
            # Neither the figure as written (to the coarser precision) nor its scaled value agrees: the value
            # itself is wrong, not only its scale.
            return (
                f"Value differs: you wrote “{predicted}”, the gold answer is “{gold}” (a different number; "
                f"the scale differs too: you wrote {yours}, the gold answer has {wanted})."
            )
        return f"Scale or percent differs: you wrote {yours}, the gold answer has {wanted} (“{predicted}” vs “{gold}”)."
    if theirs and mine and _close(mine * 100, theirs):
        return f"Off by a factor of 100: “{predicted}” vs “{gold}” — a ratio written where a percentage is expected?"
    if theirs and mine and _close(mine, theirs * 100):
        return f"Off by a factor of 100: “{predicted}” vs “{gold}” — a percentage written where a ratio is expected?"
    if mine == -theirs:
        return f"Sign differs: “{predicted}” vs “{gold}”."
    places = _decimals(gold)
    if round(mine, places) == round(theirs, places) or round(mine, _decimals(predicted)) == round(
        theirs, _decimals(predicted)
    ):
        return (
            f"Rounded differently: “{predicted}” vs “{gold}”; round to the precision the paper reports "
            f"({places} decimal place{'s' if places != 1 else ''} here)."
        )
    return f"Number differs: you wrote “{predicted}”, the gold answer is “{gold}” (a different value, not formatting)."


def explain_words(predicted: str, gold: str) -> str:
    """Reason for two text items that differ after normalisation: which words are missing or extra."""
    mine, theirs = normalised_item(predicted).split(), normalised_item(gold).split()
    if sorted(mine) == sorted(theirs):
        return f"Same words in a different order: “{predicted}” vs “{gold}”."
    missing = [word for word in theirs if word not in mine]
    extra = [word for word in mine if word not in theirs]
    parts = []
    if missing:
        parts.append(f"missing {' '.join(missing)!r}")
    if extra:
        parts.append(f"extra {' '.join(extra)!r}")
    return f"Different words: “{predicted}” vs “{gold}” ({'; '.join(parts)})."


def explain_pair(predicted: str, gold: str) -> str:
    """Reason for one given item that should have been a (different) gold item."""
    mine, theirs = _number(predicted), _number(gold)
    if mine is not None and theirs is not None:
        return explain_number(predicted, gold)
    if theirs is not None:
        return f"The gold answer is a number (“{gold}”); you wrote text (“{predicted}”)."
    if mine is not None:
        return f"The gold answer is text (“{gold}”); you wrote a number (“{predicted}”)."
    return explain_words(predicted, gold)


def explain_mismatch(predicted_items: Sequence[str], gold_items: Sequence[str]) -> str:
    """One-paragraph reason why `predicted_items` do not exactly match `gold_items` ('' when they do)."""
    predicted = [str(item).strip() for item in predicted_items if str(item).strip()]
    gold = [str(item) for item in gold_items]
    if not predicted:
        return "No answer was given."
    if exact_match(predicted, gold, MODE):
        return ""
    unmatched_gold = list(gold)
    extra: list[str] = []
    for item in predicted:
        key = normalised_item(item)
        match = next((g for g in unmatched_gold if normalised_item(g) == key), None)
        if match is None:
            extra.append(item)
        else:
            unmatched_gold.remove(match)
    if len(extra) == 1 and len(unmatched_gold) == 1:
        return explain_pair(extra[0], unmatched_gold[0])
    reasons = []
    if len(predicted) != len(gold):
        reasons.append(
            f"You gave {len(predicted)} item{'s' if len(predicted) != 1 else ''}; "
            f"the gold answer has {len(gold)} (one item per line of the list)."
        )
    if unmatched_gold:
        reasons.append(f"Missing: {_quote(unmatched_gold)}.")
    if extra:
        reasons.append(f"Not in the gold answer: {_quote(extra)}.")
    if not unmatched_gold and not extra:
        # Every item matches alone but the joined strings differ: items split or merged differently.
        reasons.append(f"The items match one by one but are split differently from the gold answer {_quote(gold)}.")
    return " ".join(reasons)

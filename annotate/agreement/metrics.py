"""Agreement between annotators, pure: Cohen's κ, Krippendorff's α (nominal), Jaccard of sets, and the answer's EM
and F1 by the TAT-QA metric (`scoring.metrics.tatqa`, reused as it scores models). No Django imports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from itertools import permutations
from typing import Any

from scoring.metrics.tatqa import score_question


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's κ of two raters over items, given as (first rater's label, second rater's label) per item.

    (observed − chance agreement) / (1 − chance agreement), chance from each rater's own label shares. None when
    there is nothing to measure: no items, or both raters gave one and the same label throughout (chance is 1)."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(1 for first, second in pairs if first == second) / n
    firsts = Counter(first for first, _ in pairs)
    seconds = Counter(second for _, second in pairs)
    chance = sum(firsts[label] * seconds[label] for label in firsts) / (n * n)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def krippendorff_alpha_nominal(units: Iterable[Sequence[Hashable | None]]) -> float | None:
    """Krippendorff's α for nominal labels: one row per unit (item), one value per rater, None where that rater did
    not label the unit; any number of raters, missing data allowed. Units with fewer than two values are not
    pairable and drop out (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", the coincidence matrix).

    α = 1 − (n − 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c · n_k. None when nothing is pairable or only one label occurs."""
    coincidences: Counter[tuple[Hashable, Hashable]] = Counter()
    for unit in units:
        values = [value for value in unit if value is not None]
        m = len(values)
        if m < 2:
            continue
        for first, second in permutations(values, 2):
            coincidences[(first, second)] += 1.0 / (m - 1)
    totals: Counter[Hashable] = Counter()
    for (first, _), weight in coincidences.items():
        totals[first] += weight
    n = sum(totals.values())
    if n <= 1:
        return None
    disagreement = sum(weight for (first, second), weight in coincidences.items() if first != second)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if expected == 0:
        return None
    return 1.0 - (n - 1) * disagreement / expected


def jaccard(first: Iterable[Hashable], second: Iterable[Hashable]) -> float:
    """|A ∩ B| / |A ∪ B| of two sets (relevant tables); two empty sets agree fully."""
    a, b = set(first), set(second)
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def answer_em_f1(
    first: Sequence[str], second: Sequence[str], *, first_scale: str = "", second_scale: str = ""
) -> tuple[float, float]:
    """EM and F1 of two annotators' answers by the TAT-QA metric (mode "fixed"), the first read as the reference:
    the items are compared as spans (bags of normalised tokens, numbers rendered with their scale). Two empty
    answers (both said "not answerable") agree; one empty answer against a given one does not."""
    a = [item for item in first if str(item).strip()]
    b = [item for item in second if str(item).strip()]
    if not a and not b:
        return 1.0, 1.0
    if not a or not b:
        return 0.0, 0.0
    reference: dict[str, Any] = {
        "answer": list(a),
        "answer_type": "multi-span" if len(a) > 1 else "span",
        "scale": first_scale or "",
    }
    score = score_question(reference, list(b), second_scale or "", mode="fixed")
    return score.em, score.f1

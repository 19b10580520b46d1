"""SciTaT §4.4's error-analysis sample: 25 free-form errors and 25 short-form errors drawn at random (seeded) for
tagging, and the distribution of the error types people give them (figure 6), with its sample size.

An error is a scored prediction that `scoring.runs.results.item_metrics` marks incorrect: short-form EM 0; free-form
BERTScore below 60 (F1 below 0.5 where the run computed no BERTScore). Failed predictions (no model output) are left
out: there is nothing to tag. Pure functions over plain dicts; no Django.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

PER_FORM = 25
MAX_PER_FORM = 500
FORMS = ("free_form", "short_form")
DISPUTED = "disputed"


def error_pools(records: Iterable[Mapping[str, Any]]) -> dict[str, list[int]]:
    """Ids of the errors of each answer form, in id order: records are {id, status, short_form, is_correct}."""
    pools: dict[str, list[int]] = {form: [] for form in FORMS}
    for record in records:
        if record.get("status") != "scored" or record.get("is_correct"):
            continue
        pools["short_form" if record.get("short_form") else "free_form"].append(int(record["id"]))
    return {form: sorted(ids) for form, ids in pools.items()}


def draw_error_sample(records: Iterable[Mapping[str, Any]], *, seed: int, per_form: int = PER_FORM) -> dict[str, Any]:
    """A seeded random sample of at most `per_form` errors of each form; the same records and seed draw the same ids."""
    if per_form < 1:
        raise ValueError(f"per_form must be at least 1, got {per_form}")
    pools = error_pools(records)
    rng = random.Random(seed)
    sample: dict[str, Any] = {"seed": seed, "per_form": per_form}
    for form in FORMS:
        pool = pools[form]
        sample[form] = rng.sample(pool, min(per_form, len(pool)))
        sample[f"{form}_errors"] = len(pool)
    return sample


def prediction_label(labels: Sequence[str]) -> str | None:
    """One prediction's error type from its taggers' labels: the most frequent, `disputed` on a tie, None untagged."""
    if not labels:
        return None
    ranked = Counter(labels).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return DISPUTED
    return ranked[0][0]


def error_distribution(sample: Mapping[str, Any], labels_by_id: Mapping[int, Sequence[str]]) -> dict[str, Any]:
    """Per form: sample size, how many are tagged, and the count and share of each error type among the tagged."""
    report: dict[str, Any] = {}
    for form in FORMS:
        ids = list(sample.get(form) or [])
        chosen = [prediction_label(labels_by_id.get(identifier, ())) for identifier in ids]
        tagged = [label for label in chosen if label is not None]
        counts = Counter(tagged)
        report[form] = {
            "sample_size": len(ids),
            "errors": int(sample.get(f"{form}_errors") or 0),
            "tagged": len(tagged),
            "types": [
                {"label": label, "count": count, "share": count / len(tagged)}
                for label, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            ],
        }
    return report

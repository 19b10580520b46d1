"""Means with seeded bootstrap confidence intervals, and breakdowns by any instance attribute (optionally clustered)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from curation.toolkit.numbers import fixed

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


# Fewer papers than this and a paper-clustered bootstrap says little (two papers give at most three distinct
# resample means): the interval is then over questions, and says so.
MIN_CLUSTERS = 10


@dataclass(frozen=True)
class Estimate:
    """A mean with its percentile bootstrap interval, how it was computed and what it resampled (`unit`: "paper"
    or "question"). `low`/`high` are None where no interval can be told; `note` then says why, and says when
    questions were resampled because there were too few papers."""

    count: int
    mean: float
    low: float | None
    high: float | None
    confidence: float
    resamples: int
    seed: int
    clustered: bool
    unit: str = "question"
    note: str = ""


def bootstrap_mean(
    values: Sequence[float],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    clusters: Sequence[Hashable] | None = None,
    min_clusters: int = MIN_CLUSTERS,
) -> Estimate:
    """Mean with a percentile bootstrap CI; with `clusters` (e.g. paper ids) whole clusters are resampled when there
    are at least `min_clusters` of them, else the questions (the note says so). An interval every resample agrees
    on (one question, or all values equal) is no interval: None, with the reason."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if clusters is not None and len(clusters) != len(values):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return Estimate(0, 0.0, None, None, confidence, resamples, seed, False, note="no interval: no values")
    note = ""
    labels = list(dict.fromkeys(clusters)) if clusters is not None else []
    if clusters is not None and len(labels) < min_clusters:
        note = f"bootstrap over questions: {len(labels)} papers, fewer than the {min_clusters} needed to resample them"
        clusters = None
    generator = np.random.default_rng(seed)
    if clusters is None:
        picks = generator.integers(0, data.size, size=(resamples, data.size))
        statistics = data[picks].mean(axis=1)
    else:
        index = {label: position for position, label in enumerate(labels)}
        positions = [index[label] for label in clusters]
        sums, counts = np.bincount(positions, weights=data), np.bincount(positions)
        picks = generator.integers(0, len(labels), size=(resamples, len(labels)))
        # The mean of the pooled questions of the sampled clusters, not a mean of cluster means.
        statistics = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = (float(bound) for bound in np.percentile(statistics, [tail, 100 - tail]))
    bounds: tuple[float | None, float | None] = (low, high)
    if low == high:
        reason = "one question" if data.size == 1 else f"all {data.size} values are equal"
        note = f"no interval: every resample has the same mean ({reason})"
        bounds = (None, None)
    return Estimate(
        count=int(data.size),
        mean=float(data.mean()),
        low=bounds[0],
        high=bounds[1],
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        clustered=clusters is not None,
        unit="paper" if clusters is not None else "question",
        note=note,
    )


def interval_text(estimate: Mapping[str, Any] | None, *, with_note: bool = True) -> str:
    """An estimate (`asdict` of an Estimate) as printed, in percent: "63.5 [60.1, 66.8]", with its note when the
    interval is over questions for want of papers or is absent ("80.0 (no interval: …)"), "—" for none. Without
    `with_note` the note is left to the caller (a page tells each note once, not in every cell)."""
    if not estimate:
        return "—"
    text = fixed(estimate["mean"], scale=100)
    if estimate.get("low") is not None and estimate.get("high") is not None:
        text += f" [{fixed(estimate['low'], scale=100)}, {fixed(estimate['high'], scale=100)}]"
    return f"{text} ({estimate['note']})" if with_note and estimate.get("note") else text

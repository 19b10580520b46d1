"""Means with seeded bootstrap confidence intervals, and breakdowns by any instance attribute (optionally clustered)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    """A mean with its percentile bootstrap interval and how it was computed."""

    count: int
    mean: float
    low: float
    high: float
    confidence: float
    resamples: int
    seed: int
    clustered: bool

    def as_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSON output."""
        return asdict(self)


def mean(values: Sequence[float]) -> float:
    """Plain arithmetic mean (0.0 for no values)."""
    return float(sum(values) / len(values)) if values else 0.0


def bootstrap_mean(
    values: Sequence[float],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    clusters: Sequence[Hashable] | None = None,
) -> Estimate:
    """Mean with a percentile bootstrap CI; with `clusters` (e.g. paper ids) whole clusters are resampled."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if clusters is not None and len(clusters) != len(values):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return Estimate(0, 0.0, 0.0, 0.0, confidence, resamples, seed, clusters is not None)
    generator = np.random.default_rng(seed)
    if clusters is None:
        picks = generator.integers(0, data.size, size=(resamples, data.size))
        statistics = data[picks].mean(axis=1)
    else:
        labels = list(dict.fromkeys(clusters))
        index = {label: position for position, label in enumerate(labels)}
        sums = np.zeros(len(labels))
        counts = np.zeros(len(labels))
        for value, label in zip(data, clusters, strict=True):
            sums[index[label]] += value
            counts[index[label]] += 1
        picks = generator.integers(0, len(labels), size=(resamples, len(labels)))
        # The mean of the pooled questions of the sampled clusters, not a mean of cluster means.
        statistics = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(statistics, [tail, 100 - tail])
    return Estimate(
        count=int(data.size),
        mean=float(data.mean()),
        low=float(low),
        high=float(high),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        clustered=clusters is not None,
    )


def breakdown(
    records: Iterable[Mapping[str, Any]],
    *,
    metric: str,
    by: str | Callable[[Mapping[str, Any]], Hashable],
    cluster_by: str | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, Estimate]:
    """Group records by an attribute (reasoning type, answer form, …) and estimate `metric` in each group.

    Records whose metric is None (e.g. EM of a free-form question) are left out of that metric.
    """
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        if record.get(metric) is None:
            continue
        key = by(record) if callable(by) else record.get(by)
        groups.setdefault(str(key if key is not None else ""), []).append(record)
    return {
        key: bootstrap_mean(
            [float(member[metric]) for member in members],
            seed=seed,
            resamples=resamples,
            confidence=confidence,
            clusters=[member.get(cluster_by) for member in members] if cluster_by else None,
        )
        for key, members in sorted(groups.items())
    }

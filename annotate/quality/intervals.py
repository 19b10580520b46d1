"""Wilson score interval for a proportion (pure; no Django): honest at small samples and at 0 or 1."""

from __future__ import annotations

import math

Z_95 = 1.959963984540054


def wilson_interval(successes: float, total: int, z: float = Z_95) -> tuple[float, float]:
    """The (low, high) 95 % Wilson interval of `successes` out of `total`; (0, 1) when nothing was measured."""
    if total <= 0:
        return 0.0, 1.0
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)

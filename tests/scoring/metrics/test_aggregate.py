"""Means, seeded bootstrap intervals and breakdowns (optionally clustered by paper)."""

from __future__ import annotations

import pytest

from scoring.metrics.aggregate import bootstrap_mean, breakdown, mean

VALUES = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0]


def test_mean_is_plain_average():
    assert mean(VALUES) == 0.7
    assert mean([]) == 0.0


def test_bootstrap_is_reproducible_with_a_seed_and_brackets_the_mean():
    first = bootstrap_mean(VALUES, seed=7)
    assert first == bootstrap_mean(VALUES, seed=7)
    assert first != bootstrap_mean(VALUES, seed=8)
    assert first.low <= first.mean <= first.high
    assert first.low < first.high


def test_clustered_bootstrap_resamples_whole_papers_and_is_wider_for_correlated_clusters():
    values = [1.0] * 10 + [0.0] * 10
    papers = ["p1"] * 10 + ["p2"] * 10
    plain = bootstrap_mean(values, seed=1)
    clustered = bootstrap_mean(values, seed=1, clusters=papers)
    assert clustered.clustered
    assert clustered.high - clustered.low > plain.high - plain.low
    # With two clusters, every resample is all of p1, all of p2, or both.
    assert {clustered.low, clustered.high} <= {0.0, 0.5, 1.0}


def test_breakdown_groups_by_attribute_and_skips_missing_metric():
    records = [
        {"reasoning_type": "look_up", "em": 1.0, "paper": "a"},
        {"reasoning_type": "look_up", "em": 0.0, "paper": "b"},
        {"reasoning_type": "analysis", "em": None, "paper": "a"},
        {"reasoning_type": "numerical", "em": 1.0, "paper": "a"},
    ]
    result = breakdown(records, metric="em", by="reasoning_type", cluster_by="paper", seed=3)
    assert set(result) == {"look_up", "numerical"}
    assert result["look_up"].mean == 0.5
    assert result["look_up"].count == 2
    assert result["look_up"].clustered


def test_invalid_confidence_is_refused():
    with pytest.raises(ValueError):
        bootstrap_mean(VALUES, confidence=1.5)

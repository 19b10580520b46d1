"""Means, seeded bootstrap intervals and breakdowns (optionally clustered by paper)."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from scoring.metrics.aggregate import MIN_CLUSTERS, bootstrap_mean, interval_text

VALUES = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0]


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
    clustered = bootstrap_mean(values, seed=1, clusters=papers, min_clusters=2)
    assert clustered.clustered and clustered.unit == "paper"
    assert clustered.high - clustered.low > plain.high - plain.low
    # With two clusters, every resample is all of p1, all of p2, or both.
    assert {clustered.low, clustered.high} <= {0.0, 0.5, 1.0}


def test_too_few_clusters_fall_back_to_questions_and_say_so():
    # Two papers are too few to resample papers: the interval is over questions, and says so.
    result = bootstrap_mean([1.0, 0.0], seed=3, clusters=["a", "b"])
    assert result.mean == 0.5 and result.count == 2
    assert not result.clustered and result.unit == "question"
    assert result.note.startswith("bootstrap over questions: 2 papers")


def test_invalid_confidence_is_refused():
    with pytest.raises(ValueError):
        bootstrap_mean(VALUES, confidence=1.5)


def test_a_two_paper_release_is_not_a_silent_degenerate_interval():
    # Each paper 4 of 5 right: every paper resample has mean 0.80, so a paper bootstrap would say [0.80, 0.80].
    values = [1.0, 1.0, 1.0, 1.0, 0.0] * 2
    papers = ["p1"] * 5 + ["p2"] * 5
    estimate = bootstrap_mean(values, seed=0, clusters=papers)
    assert estimate.unit == "question" and not estimate.clustered
    assert estimate.low < estimate.mean == 0.8 < estimate.high
    assert f"fewer than the {MIN_CLUSTERS} needed" in estimate.note
    assert interval_text(asdict(estimate)).endswith(
        f"(bootstrap over questions: 2 papers, fewer than the {MIN_CLUSTERS} needed to resample them)"
    )
    many = bootstrap_mean(values * 3, seed=0, clusters=[f"p{i}" for i in range(30)])
    assert many.unit == "paper" and many.note == ""


def test_an_interval_every_resample_agrees_on_is_shown_as_none_with_the_reason():
    estimate = bootstrap_mean([1.0] * 12, seed=0)
    assert (estimate.low, estimate.high) == (None, None)
    assert estimate.note == "no interval: every resample has the same mean (all 12 values are equal)"
    assert (
        interval_text(asdict(estimate))
        == "100.0 (no interval: every resample has the same mean (all 12 values are equal))"
    )
    assert bootstrap_mean([0.5], seed=0).note.endswith("(one question)")

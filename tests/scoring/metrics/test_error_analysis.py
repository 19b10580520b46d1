"""SciTaT §4.4's error-analysis sample: which predictions are errors, the seeded draw, the tag distribution."""

from __future__ import annotations

import pytest

from scoring.metrics.error_analysis import (
    DISPUTED,
    draw_error_sample,
    error_distribution,
    error_pools,
    prediction_label,
)


def records(short_errors: int, free_errors: int, correct: int = 5) -> list[dict]:
    rows, next_id = [], 1
    for count, short, is_correct in ((short_errors, True, False), (free_errors, False, False), (correct, True, True)):
        for _ in range(count):
            rows.append({"id": next_id, "status": "scored", "short_form": short, "is_correct": is_correct})
            next_id += 1
    rows.append({"id": next_id, "status": "failed", "short_form": True, "is_correct": False})
    return rows


def test_pools_hold_scored_errors_by_form_and_leave_failed_predictions_out():
    pools = error_pools(records(3, 2))
    assert pools == {"short_form": [1, 2, 3], "free_form": [4, 5]}


def test_draw_takes_25_of_each_form_at_random_and_repeats_for_a_seed():
    data = records(60, 40)
    sample = draw_error_sample(data, seed=7)
    assert len(sample["short_form"]) == 25 and len(sample["free_form"]) == 25
    assert len(set(sample["short_form"])) == 25
    assert set(sample["short_form"]) <= set(range(1, 61)) and set(sample["free_form"]) <= set(range(61, 101))
    assert (sample["short_form_errors"], sample["free_form_errors"]) == (60, 40)
    assert draw_error_sample(data, seed=7) == sample
    assert draw_error_sample(list(reversed(data)), seed=7) == sample  # order of the records does not matter
    assert draw_error_sample(data, seed=8)["short_form"] != sample["short_form"]
    assert sample["short_form"] != sorted(sample["short_form"])  # drawn, not the first 25


def test_a_small_pool_is_taken_whole():
    sample = draw_error_sample(records(3, 30), seed=1)
    assert sorted(sample["short_form"]) == [1, 2, 3] and len(sample["free_form"]) == 25
    with pytest.raises(ValueError):
        draw_error_sample(records(3, 3), seed=1, per_form=0)


def test_label_is_the_majority_tag_and_a_tie_is_disputed():
    assert prediction_label([]) is None
    assert prediction_label(["Calculation", "Calculation", "Miss"]) == "Calculation"
    assert prediction_label(["Calculation", "Miss"]) == DISPUTED


def test_distribution_reports_sample_size_tagged_and_shares():
    sample = {"seed": 0, "per_form": 25, "short_form": [1, 2, 3, 4], "free_form": [9], "short_form_errors": 40}
    labels = {1: ["Redundancy"], 2: ["Redundancy", "Redundancy"], 3: ["Grounding"], 9: ["Miss"]}
    report = error_distribution(sample, labels)
    short = report["short_form"]
    assert (short["sample_size"], short["tagged"], short["errors"]) == (4, 3, 40)
    assert short["types"] == [
        {"label": "Redundancy", "count": 2, "share": pytest.approx(2 / 3)},
        {"label": "Grounding", "count": 1, "share": pytest.approx(1 / 3)},
    ]
    assert report["free_form"]["types"] == [{"label": "Miss", "count": 1, "share": 1.0}]
